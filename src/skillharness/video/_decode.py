"""Low-level PyAV decoding: open a video, find its duration, fetch the frames shown at given times.

"The frame at time t" is the frame on screen at t: the last frame whose presentation time is
``<= t``. Fetching seeks to the keyframe before each target and decodes forward only until the
target is passed; it never decodes the whole file. :func:`decode_all_at` is the slow reference
(decode everything in order) that tests and the benchmark compare against.

Every PyAV/FFmpeg exception is translated here into :class:`DataError` (the file is bad) or
reported per timestamp as a failure (the file is partly bad), never leaked.
"""

from __future__ import annotations

import contextlib
import math
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import av
import av.error
import numpy as np

from skillharness.errors import DataError

__all__ = [
    "DecoderStats",
    "RawFrame",
    "VideoInfo",
    "decode_all_at",
    "decode_at",
    "decoder_stats",
    "open_video",
    "probe",
    "probe_header",
]

# Decoding forward this far (seconds) is cheaper than a new seek + keyframe decode, so close targets
# share one decode run. Forward decoding gives the same pixels as a fresh seek to the same frame.
_FORWARD_WINDOW_S = 1.0
# How far back (seconds) a retry seeks when a seek landed after its target (e.g. open GOPs).
_BACKOFF_S = (2.0, 10.0, math.inf)
# Frames presented less than this before a target are decoded even when nothing refers to them.
_FULL_DECODE_MARGIN_S = 0.25


@dataclass(frozen=True)
class VideoInfo:
    """What a probe learns about a video's first video stream."""

    path: Path
    duration_s: float
    width: int
    height: int
    fps: float


@dataclass(frozen=True)
class RawFrame:
    """A decoded frame (RGB, full size) and the presentation time it was shown at."""

    pts_s: float
    rgb: np.ndarray


@dataclass
class DecoderStats:
    """Counts of real decoding work, so tests can prove a cache hit decoded nothing."""

    opens: int = 0
    seeks: int = 0
    frames_decoded: int = 0

    def snapshot(self) -> DecoderStats:
        with _STATS_LOCK:
            return DecoderStats(self.opens, self.seeks, self.frames_decoded)


_STATS = DecoderStats()
_STATS_LOCK = threading.Lock()


def decoder_stats() -> DecoderStats:
    """A snapshot of the process-wide decoder counters (compare two snapshots to see work done)."""
    return _STATS.snapshot()


def _count(opens: int = 0, seeks: int = 0, frames: int = 0) -> None:
    with _STATS_LOCK:
        _STATS.opens += opens
        _STATS.seeks += seeks
        _STATS.frames_decoded += frames


@contextlib.contextmanager
def open_video(path: Path) -> Iterator[tuple[av.container.InputContainer, av.VideoStream]]:
    if path.is_dir():
        raise DataError(f"{path} is a folder, not a video file", file=str(path))
    if not path.is_file():
        raise DataError(f"video file not found: {path}", file=str(path))
    if path.stat().st_size == 0:  # FFmpeg would say only "Invalid data found when processing input"
        raise DataError(f"cannot read video {path}: the file is empty (0 bytes)", file=str(path))
    try:
        container = av.open(str(path), mode="r")
    except (av.error.FFmpegError, OSError, ValueError) as exc:
        raise DataError(f"cannot read video {path}: {exc}", file=str(path)) from exc
    try:
        if not container.streams.video:
            raise DataError(f"{path} has no video stream (audio-only or not a video)", file=str(path))
        stream = container.streams.video[0]
        stream.thread_type = "SLICE"  # frame threading would reorder errors and cost a core we lack
        _count(opens=1)
        yield container, stream
    finally:
        container.close()


def _stream_duration_s(container: av.container.InputContainer, stream: av.VideoStream) -> float:
    if stream.duration is not None and stream.time_base is not None:
        return float(stream.duration * stream.time_base)
    if container.duration is not None:
        return container.duration / av.time_base
    return 0.0


def probe(path: Path) -> VideoInfo:
    """Read a video's header: duration, size and frame rate. Raises DataError for a bad file."""
    path = Path(path)
    with open_video(path) as (container, stream):
        return probe_header(path, container, stream)


def probe_header(path: Path, container: av.container.InputContainer, stream: av.VideoStream) -> VideoInfo:
    """What the header of the opened ``path`` says; DataError when its video stream has no frames."""
    duration = _stream_duration_s(container, stream)
    if duration <= 0:
        raise DataError(f"{path} has a video stream with no frames", file=str(path))
    rate = stream.average_rate or stream.guessed_rate or Fraction(0)
    return VideoInfo(path, duration, stream.codec_context.width, stream.codec_context.height, float(rate))


class _Cursor:
    """Decoding position inside one open stream: seeks when a target is far, decodes forward when near."""

    def __init__(self, container: av.container.InputContainer, stream: av.VideoStream) -> None:
        self.container = container
        self.stream = stream
        self.tb = stream.time_base or Fraction(1, 1000)
        self.start_pts = stream.start_time or 0
        rate = stream.average_rate or stream.guessed_rate
        self.frame_pts = int(1 / (rate * self.tb)) if rate else 1
        # Frames presented this close before a target are always decoded (see _decode_forward).
        self._margin = max(2 * self.frame_pts, int(_FULL_DECODE_MARGIN_S / self.tb))
        self._target = 0
        self._skipping = True
        self._frames: Iterator[av.VideoFrame] | None = None
        self._pending: av.VideoFrame | None = None  # the first frame past the previous target
        self._last: av.VideoFrame | None = None  # the frame found for the previous target

    def reset(self) -> None:
        """Forget the decoding position (after a broken packet): the next target seeks afresh."""
        self._frames = self._pending = self._last = None

    def to_pts(self, t: float) -> int:
        # Microsecond rounding first: 3.3 s must mean 33/10 s, not the float just below it.
        return self.start_pts + math.floor(Fraction(round(t * 1_000_000), 1_000_000) / self.tb)

    def _seek(self, pts: int) -> None:
        _count(seeks=1)
        self.container.seek(max(pts, self.start_pts), stream=self.stream, backward=True, any_frame=False)
        self._frames = self._decode_forward()
        self._pending = self._last = None

    def _decode_forward(self) -> Iterator[av.VideoFrame]:
        """Decode packets in file order, skipping frames that cannot matter for the current target.

        A non-reference frame (one no other frame is predicted from) presented well before the
        target can neither be the answer nor change any frame that could be, so the decoder skips
        it; with B-frames that is about half the work. Every frame presented within the margin
        before the target is decoded in full, and reference frames always are, so the result is
        pixel-identical to a full decode.
        """
        context = self.stream.codec_context
        for packet in self.container.demux(self.stream):
            far = self._skipping and packet.pts is not None and packet.pts < self._target - self._margin
            context.skip_frame = "NONREF" if far else "DEFAULT"
            for frame in context.decode(packet):
                _count(frames=1)
                if frame.pts is not None:
                    yield frame

    def _next(self) -> av.VideoFrame | None:
        if self._pending is not None:
            frame, self._pending = self._pending, None
            return frame
        if self._frames is None:
            return None
        return next(self._frames, None)

    def frame_at(self, target: int) -> av.VideoFrame | None:
        """The frame shown at pts ``target``, or None if the data for it cannot be decoded."""
        last, pending = self._last, self._pending
        if last is not None and pending is not None and last.pts <= target < pending.pts:
            return last  # same frame as the previous target (duplicate or very close timestamps)
        near = self._pending is not None and 0 <= target - self._pending.pts <= self._window()
        if not near:
            self._seek(target)
        for backoff in (0.0, *_BACKOFF_S):
            if backoff:
                self._seek(target - int(backoff / self.tb) if math.isfinite(backoff) else self.start_pts)
            found, landed_late = self._scan(target)
            if found is not None and found.pts < target - self._margin and self._skipping:
                return self._without_skipping(target)  # sparse frames: the answer may have been skipped
            if not landed_late:
                self._last = found
                return found
        return None

    def _without_skipping(self, target: int) -> av.VideoFrame | None:
        self._skipping = False
        self.reset()  # decode afresh from the keyframe, with every frame decoded
        try:
            return self.frame_at(target)
        finally:
            self._skipping = True

    def _window(self) -> int:
        return int(_FORWARD_WINDOW_S / self.tb)

    def _scan(self, target: int) -> tuple[av.VideoFrame | None, bool]:
        """Decode forward to ``target``; also say whether the first frame was already past it."""
        self._target = target
        best: av.VideoFrame | None = None
        first = True
        while (frame := self._next()) is not None:
            if frame.pts > target:
                self._pending = frame
                return best, best is None and first
            best, first = frame, False
        # End of stream: the last frame counts only if it is still on screen at the target.
        if best is not None and best.pts + self.frame_pts > target:
            return best, False
        return None, False


def decode_at(path: Path, timestamps: Sequence[float]) -> list[RawFrame | None]:
    """Frames shown at each timestamp (seconds), by seeking; None where the file could not be decoded.

    Raises:
        DataError: the file is missing, unreadable, or has no video stream.
    """
    path = Path(path)
    order = sorted(range(len(timestamps)), key=lambda i: timestamps[i])
    out: list[RawFrame | None] = [None] * len(timestamps)
    with open_video(path) as (container, stream):
        cursor = _Cursor(container, stream)
        for index in order:
            try:
                frame = cursor.frame_at(cursor.to_pts(timestamps[index]))
            except (av.error.FFmpegError, ValueError):
                cursor.reset()
                frame = None
            if frame is not None:
                pts_s = float((frame.pts - cursor.start_pts) * cursor.tb)
                out[index] = RawFrame(pts_s, _displayed_rgb(frame))
    return out


def decode_all_at(path: Path, timestamps: Sequence[float]) -> list[RawFrame | None]:
    """Reference implementation: decode every frame in order and pick the ones shown at each time."""
    path = Path(path)
    with open_video(path) as (container, stream):
        cursor = _Cursor(container, stream)
        targets = sorted((cursor.to_pts(t), i) for i, t in enumerate(timestamps))
        out: list[RawFrame | None] = [None] * len(timestamps)
        previous: av.VideoFrame | None = None
        k = 0
        for frame in _decode_until_error(container, stream):
            while k < len(targets) and frame.pts > targets[k][0]:
                if previous is not None:
                    out[targets[k][1]] = _raw(previous, cursor)
                k += 1
            previous = frame
        for pts, i in targets[k:]:
            if previous is not None and previous.pts + cursor.frame_pts > pts:
                out[i] = _raw(previous, cursor)
        return out


def _raw(frame: av.VideoFrame, cursor: _Cursor) -> RawFrame:
    return RawFrame(float((frame.pts - cursor.start_pts) * cursor.tb), _displayed_rgb(frame))


def _displayed_rgb(frame: av.VideoFrame) -> np.ndarray:
    """The frame as a player shows it: a phone video's rotation metadata (counter-clockwise) applied."""
    rgb = frame.to_ndarray(format="rgb24")
    quarter_turns = round((frame.rotation or 0) / 90) % 4
    return np.ascontiguousarray(np.rot90(rgb, quarter_turns)) if quarter_turns else rgb


def _decode_until_error(
    container: av.container.InputContainer, stream: av.VideoStream
) -> Iterator[av.VideoFrame]:
    try:
        for frame in container.decode(stream):
            _count(frames=1)
            if frame.pts is not None:
                yield frame
    except (av.error.FFmpegError, ValueError):
        return
