"""Frame sampling: which timestamps, and the JPEG frames shown at them.

The sampling rule (timestamps are rounded to whole microseconds):

- uniform, N frames over a video of duration D: ``t_i = (i + 0.5) * D / N`` for ``i = 0..N-1``;
- range, N frames over ``[start, end]``: ``t_i = start + (i + 0.5) * (end - start) / N``.

Each frame is the centre of an equal slice, so no frame sits on the first (often black) or the
past-the-end instant. The frame "at" ``t`` is the one on screen at ``t`` (the last frame whose
presentation time is ``<= t``). Frames are resized (never enlarged) so their longest side is
``FramesConfig.longest_side`` and encoded as JPEG at ``FramesConfig.jpeg_quality``.

Through a clip :class:`Window` (a question about ``[start, end]`` of the file) the same rules run
on the window's own timeline: its duration is ``min(end, video duration) - start``, time ``t`` is
the file's ``start + t``, and every frame shown lies inside the window.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from PIL import Image

from skillharness.errors import DataError
from skillharness.video._decode import decode_at, probe
from skillharness.video.cache import FrameCache, VideoIdentity, default_cache_dir
from skillharness.video.config import FramesConfig
from skillharness.video.integrity import probe_whole
from skillharness.video.types import Frame, FrameSet, Window

__all__ = [
    "FrameSampler",
    "encode_jpeg",
    "range_timestamps",
    "uniform_timestamps",
    "video_duration",
    "whole_video_duration",
    "window_span",
]


def _round_us(t: float) -> float:
    return round(t, 6)


def uniform_timestamps(duration_s: float, count: int) -> tuple[float, ...]:
    """``count`` timestamps ``(i + 0.5) * duration / count``: the centres of equal slices."""
    return range_timestamps(0.0, duration_s, count)


def range_timestamps(start_s: float, end_s: float, count: int) -> tuple[float, ...]:
    """``count`` timestamps ``start + (i + 0.5) * (end - start) / count``."""
    if count < 1:
        raise DataError(f"{count} frames requested; ask for at least one")
    if not end_s > start_s:
        raise DataError(f"empty time range [{start_s}, {end_s}]: end must be after start")
    span = end_s - start_s
    return tuple(_round_us(start_s + (i + 0.5) * span / count) for i in range(count))


def encode_jpeg(rgb: np.ndarray, longest_side: int, quality: int) -> tuple[bytes, int, int]:
    """Resize an RGB array so its longest side is at most ``longest_side``; return (jpeg, w, h)."""
    image = Image.fromarray(rgb, mode="RGB")
    scale = longest_side / max(image.size)
    if scale < 1:
        size = (max(1, round(image.width * scale)), max(1, round(image.height * scale)))
        image = image.resize(size, Image.Resampling.BICUBIC)
    buffer = io.BytesIO()
    image.save(buffer, format="JPEG", quality=quality)
    return buffer.getvalue(), image.width, image.height


# Durations already read in this process, by file identity: the start-up media check reads every
# video's header, and the run's questions then find it here instead of opening each file again.
_durations: dict[VideoIdentity, float] = {}


def video_duration(path: Path | str) -> float:
    """Duration of a video in seconds (from its header; nothing is decoded), read once per file
    identity in a process (a replaced file has a new size or mtime and is read again).

    Raises:
        DataError: missing, unreadable, audio-only or frameless file.
    """
    path = Path(path)
    try:
        identity = VideoIdentity.of(path)
    except OSError:
        return probe(path).duration_s  # raises the DataError that names the missing file
    return _duration_of(identity, path)


def whole_video_duration(path: Path | str) -> float:
    """:func:`video_duration`, with the file also read back at its end (see
    :mod:`skillharness.video.integrity`): what a run checks before it spends anything, so a video
    cut short is named then instead of failing its questions at their last frames.

    Raises:
        DataError: missing, unreadable, audio-only, frameless or cut-short file.
    """
    path = Path(path)
    duration = probe_whole(path).duration_s
    with contextlib.suppress(OSError):  # vanished since: the next read names it
        _durations[VideoIdentity.of(path)] = duration  # the run's later reads need not open it again
    return duration


def _duration_of(identity: VideoIdentity, path: Path) -> float:
    known = _durations.get(identity)
    if known is None:
        known = _durations[identity] = probe(path).duration_s
    return known


def window_span(video: Path | str, duration_s: float, window: Window | None) -> float:
    """The length of the timeline the agent sees: the whole ``duration_s``, or the window's part of it.

    Raises:
        DataError: the window starts at or after the end of the video.
    """
    if window is None:
        return duration_s
    if window.start_s >= duration_s:
        raise DataError(
            f"clip window {window.label()} starts after the end of {video} (duration {duration_s:.3f} s)",
            file=str(video),
        )
    span = _round_us(min(window.end_s, duration_s) - window.start_s)
    if span <= 0:  # shorter than the microsecond timestamps are rounded to: no frame fits in it
        raise DataError(
            f"clip window {window.label()} of {video} (duration {duration_s:.6f} s) is shorter than a "
            "microsecond: no frame lies in it",
            file=str(video),
        )
    return span


class FrameSampler:
    """Samples JPEG frames from video files, through the on-disk frame cache.

    Args:
        config: Resize, quality and cache settings.
        cache: An explicit cache (tests); by default ``config.cache_dir`` or the user cache folder,
            or none when ``config.cache_enabled`` is false.
    """

    def __init__(self, config: FramesConfig | None = None, cache: FrameCache | None = None) -> None:
        self.config = config or FramesConfig()
        if cache is None and self.config.cache_enabled:
            cache = FrameCache(self.config.cache_dir or default_cache_dir())
        self.cache = cache

    def duration(self, video: Path | str, window: Window | None = None) -> float:
        """The video's duration in seconds (through ``window``: the window's length), cached by file
        identity."""
        return window_span(video, self._full_duration(video), window)

    def _full_duration(self, video: Path | str) -> float:
        path = _existing(video)
        identity = VideoIdentity.of(path)
        cached = self.cache.get_duration(identity) if self.cache else None
        if cached is not None:
            return cached
        duration = _duration_of(identity, path)
        if self.cache:
            self.cache.put_duration(identity, duration)
        return duration

    def uniform(self, video: Path | str, count: int, window: Window | None = None) -> FrameSet:
        """``count`` frames spread uniformly over the whole video (or over ``window``)."""
        duration = self.duration(video, window)
        return self._sample(Path(video), duration, uniform_timestamps(duration, count), window)

    def range(
        self, video: Path | str, start_s: float, end_s: float, count: int, window: Window | None = None
    ) -> FrameSet:
        """``count`` frames spread uniformly over ``[start_s, end_s]``, which must lie inside the video
        (with ``window``: inside the window, on its timeline).

        Raises:
            DataError: the range is empty or reaches outside ``[0, duration]``.
        """
        duration = self.duration(video, window)
        if end_s <= start_s:  # reversed or empty, wherever it lies
            raise DataError(
                f"time range [{start_s}, {end_s}] of {video} is empty: the end must be after the start",
                file=str(video),
            )
        if start_s < 0 or end_s > duration or not end_s > start_s:  # the last: NaN
            where = f"the clip {window.label()} of {video}" if window else f"the video {video}"
            raise DataError(
                f"time range [{start_s}, {end_s}] is outside {where} (duration {duration:.3f} s)",
                file=str(video),
            )
        return self._sample(Path(video), duration, range_timestamps(start_s, end_s, count), window)

    def at(self, video: Path | str, timestamps: Sequence[float], window: Window | None = None) -> FrameSet:
        """The frames shown at explicit timestamps (each within ``[0, duration)``, on ``window``'s
        timeline when given)."""
        duration = self.duration(video, window)
        if not timestamps:
            raise DataError(f"zero frames requested from {video}", file=str(video))
        outside = [t for t in timestamps if not 0 <= t < duration]
        if outside:
            raise DataError(
                f"timestamps {outside} are outside the video {video} (duration {duration:.3f} s)",
                file=str(video),
            )
        return self._sample(Path(video), duration, tuple(_round_us(t) for t in timestamps), window)

    def cached_uniform(self, video: Path | str, count: int, window: Window | None = None) -> FrameSet | None:
        """:meth:`uniform`'s frames when the cache holds all of them (and the duration), else None.

        Reads the cache only: nothing is probed or decoded, so it is cheap enough for the caller's
        process (a decode pool sends only misses to its workers).
        """
        duration = self._cached_duration(video, window)
        if duration is None:
            return None
        return self._from_cache(Path(video), duration, uniform_timestamps(duration, count), window)

    def cached_range(
        self, video: Path | str, start_s: float, end_s: float, count: int, window: Window | None = None
    ) -> FrameSet | None:
        """:meth:`range`'s frames when the cache holds all of them, else None (a bad range too)."""
        duration = self._cached_duration(video, window)
        if duration is None or start_s < 0 or end_s > duration or not end_s > start_s:
            return None
        return self._from_cache(Path(video), duration, range_timestamps(start_s, end_s, count), window)

    def _cached_duration(self, video: Path | str, window: Window | None) -> float | None:
        path = Path(video)
        if self.cache is None or not path.is_file():
            return None
        full = self.cache.get_duration(VideoIdentity.of(path))
        if full is None or (window is not None and window.start_s >= full):
            return None  # a window past the end is the sampler's error to report, not a miss here
        return window_span(path, full, window)

    def _keys(self, identity: VideoIdentity, timestamps: Sequence[float], window: Window | None) -> list[str]:
        side, quality = self.config.longest_side, self.config.jpeg_quality
        return [FrameCache.frame_key(identity, t, side, quality, window) for t in timestamps]

    def _lookup(
        self, path: Path, timestamps: Sequence[float], window: Window | None
    ) -> tuple[list[str], dict[int, Frame]]:
        """The frames' cache keys, and the cached frames by position."""
        keys = self._keys(VideoIdentity.of(path), timestamps, window)
        found: dict[int, Frame] = {}
        if self.cache:
            for i, (key, t) in enumerate(zip(keys, timestamps, strict=True)):
                if (hit := self.cache.get_frame(key, t)) is not None:
                    found[i] = hit
        return keys, found

    def _from_cache(
        self, path: Path, duration: float, timestamps: tuple[float, ...], window: Window | None
    ) -> FrameSet | None:
        _, found = self._lookup(path, timestamps, window)
        if len(found) < len(timestamps):
            return None
        return _frame_set(path, duration, timestamps, found, hits=len(found), window=window)

    def _sample(
        self, path: Path, duration: float, timestamps: tuple[float, ...], window: Window | None = None
    ) -> FrameSet:
        keys, found = self._lookup(path, timestamps, window)
        hits = len(found)
        missing = [i for i in range(len(timestamps)) if i not in found]
        decoded = self._decode(path, [timestamps[i] for i in missing], window)
        fresh = {i: frame for i, frame in zip(missing, decoded, strict=True) if frame is not None}
        found.update(fresh)
        if not found:
            raise DataError(f"no frame of {path} could be decoded at {list(timestamps)}", file=str(path))
        if self.cache:  # only after every check passed: an error leaves nothing behind
            for i, frame in fresh.items():
                self.cache.put_frame(keys[i], frame)
        return _frame_set(path, duration, timestamps, found, hits=hits, window=window)

    def _decode(self, path: Path, timestamps: list[float], window: Window | None) -> list[Frame | None]:
        if not timestamps:
            return []
        side, quality = self.config.longest_side, self.config.jpeg_quality
        # Window time t is the file's offset + t; the frame keeps the window's times.
        offset = window.start_s if window is not None else 0.0
        out: list[Frame | None] = []
        raws = decode_at(path, [_round_us(offset + t) for t in timestamps])
        for t, raw in zip(timestamps, raws, strict=True):
            if raw is None:
                out.append(None)
                continue
            jpeg, width, height = encode_jpeg(raw.rgb, side, quality)
            out.append(Frame(t, _round_us(raw.pts_s - offset), jpeg, width, height))
        return out


def _frame_set(
    path: Path,
    duration: float,
    timestamps: tuple[float, ...],
    found: dict[int, Frame],
    *,
    hits: int,
    window: Window | None = None,
) -> FrameSet:
    return FrameSet(
        video=path,
        duration_s=duration,
        requested_s=timestamps,
        frames=tuple(found[i] for i in sorted(found)),
        failed_timestamps=tuple(t for i, t in enumerate(timestamps) if i not in found),
        from_cache=hits,
        window=window,
    )


def _existing(video: Path | str) -> Path:
    path = Path(video)
    if path.is_dir():  # "not found" would send the user looking for a file that is there
        raise DataError(f"{path} is a folder, not a video file", file=str(path))
    if not path.is_file():
        raise DataError(f"video file not found: {path}", file=str(path))
    return path
