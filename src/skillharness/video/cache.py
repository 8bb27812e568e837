"""On-disk frame cache: a second request for the same frame does no decoding.

A key names everything the cached bytes depend on: the video file's identity (resolved path, size,
modification time in ns), the timestamp (rounded to microseconds), the longest side and the JPEG
quality, plus a format version. Replacing or touching the video changes its identity, so stale
frames are never served. A frame sampled through a clip window (a question about a stretch of the
file, its timestamp on the window's timeline) also names the window, so two windows of one video
never share an entry, nor a window and the whole video.

Each entry is one file: a magic line, a JSON header (with the sha256 of the payload) and the JPEG.
Writes go through :mod:`skillharness.util.atomic` with ``durable=False``: a temp file and an atomic
rename, but no ``fsync``. An entry can always be rebuilt, so a flush per frame (which cost about
half of the decoding threads' time) buys nothing; what protects the reader is the validation on
read. Anything unreadable, truncated, empty or mismatching its checksum is a miss: the file is
deleted and the frame decoded again (guarded deserialization).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
from dataclasses import dataclass
from pathlib import Path

from skillharness.util.atomic import atomic_write_bytes, sha256_bytes
from skillharness.util.canonical import content_hash
from skillharness.video.types import Frame, Window

__all__ = ["FrameCache", "VideoIdentity", "default_cache_dir"]

_MAGIC = b"SKILLHARNESS-FRAME 1\n"
# 2: frames carry the video's rotation metadata applied; version-1 entries (unrotated) are never served.
_FORMAT_VERSION = 2


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/skillharness/frames``, or ``~/.cache/skillharness/frames``."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "skillharness" / "frames"


@dataclass(frozen=True)
class VideoIdentity:
    """Who a video file is, for caching: same path, size and mtime means same content."""

    path: str
    size: int
    mtime_ns: int

    @classmethod
    def of(cls, path: Path) -> VideoIdentity:
        stat = path.stat()
        return cls(str(path.resolve()), stat.st_size, stat.st_mtime_ns)

    def digest(self) -> str:
        return content_hash([self.path, self.size, self.mtime_ns])


class FrameCache:
    """A folder of cached JPEG frames and video durations."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    @staticmethod
    def frame_key(
        video: VideoIdentity,
        timestamp_s: float,
        longest_side: int,
        quality: int,
        window: Window | None = None,
    ) -> str:
        """The cache key of one frame (hex sha256); ``timestamp_s`` is on ``window``'s timeline."""
        parts: list[object] = [_FORMAT_VERSION, video.digest(), round(timestamp_s * 1_000_000), longest_side]
        parts.append(quality)
        if window is not None:  # left out for the whole video: its existing entries stay valid
            parts += ["window", _micros(window.start_s), _micros(window.end_s)]
        return content_hash(parts)

    def _path(self, key: str, suffix: str) -> Path:
        return self.root / key[:2] / f"{key}{suffix}"

    def get_frame(self, key: str, timestamp_s: float) -> Frame | None:
        """The cached frame, or None on a miss (a corrupt entry is deleted and is a miss)."""
        entry = self._read(self._path(key, ".frame"))
        if entry is None:
            return None
        header, payload = entry
        try:
            return Frame(
                timestamp_s, float(header["pts_s"]), payload, int(header["width"]), int(header["height"])
            )
        except (KeyError, TypeError, ValueError):
            self._discard(self._path(key, ".frame"))
            return None

    def put_frame(self, key: str, frame: Frame) -> None:
        """Store a frame atomically."""
        header = {"pts_s": frame.pts_s, "width": frame.width, "height": frame.height}
        self._write(self._path(key, ".frame"), header, frame.jpeg)

    def get_duration(self, video: VideoIdentity) -> float | None:
        """The cached duration of a video, or None."""
        entry = self._read(self._path(video.digest(), ".duration"))
        if entry is None:
            return None
        try:
            return float(entry[0]["duration_s"])
        except (KeyError, TypeError, ValueError):
            self._discard(self._path(video.digest(), ".duration"))
            return None

    def put_duration(self, video: VideoIdentity, duration_s: float) -> None:
        """Store a video's duration atomically."""
        self._write(self._path(video.digest(), ".duration"), {"duration_s": duration_s}, b"")

    def _write(self, path: Path, header: dict[str, object], payload: bytes) -> None:
        header = {**header, "sha256": sha256_bytes(payload), "length": len(payload)}
        line = json.dumps(header, sort_keys=True).encode() + b"\n"
        atomic_write_bytes(path, _MAGIC + line + payload, durable=False)

    def _read(self, path: Path) -> tuple[dict[str, object], bytes] | None:
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError:
            self._discard(path)
            return None
        parsed = _parse(data)
        if parsed is None:
            self._discard(path)
        return parsed

    @staticmethod
    def _discard(path: Path) -> None:
        with contextlib.suppress(OSError):
            path.unlink()


def _micros(seconds: float) -> int | str:
    """Whole microseconds; an infinite end ("to the end of the video") has no integer, so it is
    keyed by its name."""
    return round(seconds * 1_000_000) if math.isfinite(seconds) else repr(seconds)


def _parse(data: bytes) -> tuple[dict[str, object], bytes] | None:
    if not data.startswith(_MAGIC):
        return None
    line, sep, payload = data[len(_MAGIC) :].partition(b"\n")
    if not sep:
        return None
    try:
        header = json.loads(line)
    except (UnicodeDecodeError, ValueError):
        return None
    if not isinstance(header, dict):
        return None
    if header.get("length") != len(payload) or header.get("sha256") != sha256_bytes(payload):
        return None
    return header, payload
