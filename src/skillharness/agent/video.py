"""The agent's view of videos and subtitles on disk, over the video layer.

Videos are found as ``<videos_dir>/<videoID>.<ext>`` and subtitles as
``<subtitles_dir>/<videoID>.srt`` (the Video-MME layout), or at the question's own
``subtitle_path`` (relative to ``subtitles_dir``), its times shifted by ``subtitle_offset``.

A question with a clip window (``clip_start``/``clip_end``) sees only that stretch, as a video of
its own: its duration is the window's, its times count from the window's start, and its frames
and subtitle lines all come from inside it (the reference protocols' frame indices too).

Decoding is CPU-bound and synchronous, so it runs off the event loop: frame sampling in a
:class:`DecodePool` of worker processes when one is given (every core, and no GIL shared with the
loop), the rest on worker threads, at most ``max_decoders`` at a time. The event loop stays free
for the model calls of the other questions in flight. A video's duration is probed once per
``LocalVideos`` (and per file identity): every other question of the video gets it from memory.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TypeVar

import numpy as np

from skillharness.agent.prompt import format_seconds
from skillharness.data.questions import Question
from skillharness.errors import DataError
from skillharness.video import (
    DecodePool,
    FrameLayout,
    frame_layout,
    frames_by_index,
    question_subtitles,
    window_span,
)
from skillharness.video.frames import FrameSampler
from skillharness.video.locate import locate_video
from skillharness.video.subtitles import SubtitleLine, Subtitles, load_subtitles
from skillharness.video.types import Frame, FrameSet, Window

__all__ = ["LocalVideos", "question_window"]


def question_window(question: Question) -> Window | None:
    """The stretch of its video ``question`` is about, or None for the whole video."""
    if question.clip_start is None or question.clip_end is None:
        return None
    return Window(question.clip_start, question.clip_end)


_T = TypeVar("_T")


class LocalVideos:
    """A :class:`FrameSource` and :class:`SubtitleSource` over video and subtitle folders."""

    def __init__(
        self,
        sampler: FrameSampler,
        videos_dir: Path,
        subtitles_dir: Path | None = None,
        *,
        max_decoders: int = 2,
        pool: DecodePool | None = None,
    ) -> None:
        self._sampler = sampler
        self._pool = pool
        self._videos_dir = Path(videos_dir)
        self._subtitles_dir = Path(subtitles_dir) if subtitles_dir else None
        self._decoders = asyncio.Semaphore(max_decoders)
        # (path, size, mtime_ns, offset, window): a subtitle file replaced mid-run is read again.
        self._subtitles: dict[tuple[str, int, int, float, Window | None], Subtitles] = {}
        # (path, size, mtime_ns) -> the probe's future: questions of one video share one probe.
        self._durations: dict[tuple[str, int, int], asyncio.Future[float]] = {}
        self._layouts: dict[tuple[str, int, int], FrameLayout] = {}

    @property
    def videos_dir(self) -> Path:
        """The folder the videos are found in."""
        return self._videos_dir

    def video_path(self, question: Question) -> Path:
        """The question's video file; DataError naming the folder and the names tried when absent."""
        return locate_video(self._videos_dir, question.videoID, task=question.task_type)

    async def _decode(self, function: Callable[..., _T], *args: object) -> _T:
        async with self._decoders:
            return await asyncio.to_thread(function, *args)

    async def duration_s(self, question: Question) -> float:
        """The length of what the question sees: the video, or its clip window."""
        path = self.video_path(question)
        return window_span(path, await self._full_duration(path), question_window(question))

    async def _full_duration(self, path: Path) -> float:
        key = _identity(path)  # a replaced file is probed again, as the sampler's own cache would
        probe = self._durations.get(key)
        if probe is None:
            probe = asyncio.ensure_future(self._decode(self._sampler.duration, path))
            self._durations[key] = probe
            probe.add_done_callback(lambda done: self._forget_failed(key, done))
        # shield: one question's cancellation must not cancel the probe the others share
        return await asyncio.shield(probe)

    async def prefetch_durations(self, questions: Iterable[Question]) -> None:
        """Probe the questions' videos one at a time, in order, so questions find durations in memory.

        Run it as a background task beside the questions (cancel it when they are done). A video
        that fails here is not remembered: its question probes again and reports the failure.
        """
        seen: set[str] = set()
        for question in questions:
            if question.videoID in seen:
                continue
            seen.add(question.videoID)
            try:
                await self.duration_s(question)
            except Exception:  # the question's own probe meets and reports it
                continue

    def _forget_failed(self, key: tuple[str, int, int], probe: asyncio.Future[float]) -> None:
        if probe.cancelled() or probe.exception() is not None:  # not remembered: the next question retries
            self._durations.pop(key, None)

    async def uniform(self, question: Question, count: int) -> FrameSet:
        window = question_window(question)
        if self._pool is not None:  # the pool queues work itself: one job per worker process
            return await self._pool.uniform(self.video_path(question), count, window)
        return await self._decode(self._sampler.uniform, self.video_path(question), count, window)

    async def between(self, question: Question, start_s: float, end_s: float, count: int) -> FrameSet:
        path, window = self.video_path(question), question_window(question)
        if self._pool is not None:
            return await self._pool.range(path, start_s, end_s, count, window)
        return await self._decode(self._sampler.range, path, start_s, end_s, count, window)

    async def layout(self, question: Question) -> FrameLayout:
        """Frame count and rate of what the question sees (for the reference protocols' index rules):
        the video's, or its clip window's frames only."""
        full = await self._file_layout(self.video_path(question))
        first, stop = _window_frames(full, question_window(question))
        return FrameLayout(stop - first, full.fps)

    async def frame_indices(
        self, question: Question, frames: Sequence[Frame]
    ) -> tuple[FrameLayout, tuple[int, ...]]:
        """What the question sees as decoded frames (its clip's, with a window) and the index there
        of each frame, from its presentation time: frame ``i`` is on screen from ``i / fps``."""
        full = await self._file_layout(self.video_path(question))
        window = question_window(question)
        first, stop = _window_frames(full, window)
        offset = window.start_s if window is not None else 0.0
        indices = tuple(
            min(stop - 1, max(first, round((frame.pts_s + offset) * full.fps))) - first for frame in frames
        )
        return FrameLayout(stop - first, full.fps), indices

    async def _file_layout(self, path: Path) -> FrameLayout:
        key = _identity(path)
        if key not in self._layouts:  # read once per file identity; questions of a video share it
            self._layouts[key] = await self._decode(frame_layout, path)
        return self._layouts[key]

    async def frames_at(
        self, question: Question, indices: Sequence[int], layout: FrameLayout
    ) -> list[np.ndarray]:
        """Full-resolution RGB frames by decoded index (uncached: each protocol encodes its own way);
        with a clip window, index 0 is the window's first frame and ``layout`` its frames."""
        path = self.video_path(question)
        full = await self._file_layout(path)
        first, stop = _window_frames(full, question_window(question))
        outside = [i for i in indices if not 0 <= i < min(layout.total_frames, stop - first)]
        if outside:  # checked here: shifted, an index past the clip would be a frame after it
            raise DataError(f"frame indices {outside} are outside the clip of {path} ({stop - first} frames)")
        return await self._decode(frames_by_index, path, [first + i for i in indices], full)

    def subtitle_file(self, question: Question) -> Path | None:
        """The question's subtitle file: its own ``subtitle_path`` (relative to the subtitle folder),
        else ``<videoID>.srt`` (or .vtt/.ass/.ssa); None when there is none."""
        return question_subtitles(self._subtitles_dir, question.subtitle_path, question.videoID)

    async def _lines(self, question: Question) -> Subtitles:
        path = self.subtitle_file(question)
        window = question_window(question)
        key = (*(_identity(path) if path is not None else ("", 0, 0)), question.subtitle_offset, window)
        if key not in self._subtitles:
            loaded = await asyncio.to_thread(load_subtitles, path)
            self._subtitles[key] = loaded.on_timeline(question.subtitle_offset, window)
        return self._subtitles[key]

    async def lines_at(self, question: Question, timestamps: Sequence[float]) -> tuple[str, ...]:
        return _formatted((await self._lines(question)).nearest(timestamps))

    async def lines_between(self, question: Question, start_s: float, end_s: float) -> tuple[str, ...]:
        return _formatted((await self._lines(question)).overlapping(start_s, end_s))


def _identity(path: Path) -> tuple[str, int, int]:
    """(path, size, mtime_ns): one file's identity for the in-memory probes (a stat, no read)."""
    stat = path.stat()
    return str(path), stat.st_size, stat.st_mtime_ns


def _window_frames(layout: FrameLayout, window: Window | None) -> tuple[int, int]:
    """The decoded indices ``[first, stop)`` of the frames on screen inside ``window`` (all without):
    frame ``i`` shows during ``[i / fps, (i + 1) / fps)``, so the first is the one showing at its
    start and the last the one showing just before its end."""
    if window is None:
        return 0, layout.total_frames
    first = min(layout.total_frames - 1, math.floor(window.start_s * layout.fps))
    stop = min(layout.total_frames, math.ceil(window.end_s * layout.fps))
    return first, max(first + 1, stop)


def _formatted(lines: Sequence[SubtitleLine]) -> tuple[str, ...]:
    return tuple(f"[{format_seconds(line.start_s)}] {line.text}" for line in lines)
