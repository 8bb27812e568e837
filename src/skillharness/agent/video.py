"""The agent's view of videos and subtitles on disk, over the video layer.

Videos are found as ``<videos_dir>/<videoID>.<ext>`` and subtitles as
``<subtitles_dir>/<videoID>.srt`` (the Video-MME layout). Decoding is CPU-bound and synchronous,
so it runs off the event loop: frame sampling in a :class:`DecodePool` of worker processes when
one is given (every core, and no GIL shared with the loop), the rest on worker threads, at most
``max_decoders`` at a time. The event loop stays free for the model calls of the other questions
in flight. A video's duration is probed once per
``LocalVideos`` (and per file identity): every other question of the video gets it from memory.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TypeVar

import numpy as np

from skillharness.agent.prompt import format_seconds
from skillharness.data.questions import Question
from skillharness.video import DecodePool, FrameLayout, frame_layout, frames_by_index
from skillharness.video.frames import FrameSampler
from skillharness.video.locate import locate_subtitles, locate_video
from skillharness.video.subtitles import SubtitleLine, Subtitles, load_subtitles
from skillharness.video.types import FrameSet

__all__ = ["LocalVideos"]

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
        self._subtitles: dict[str, Subtitles] = {}
        # (path, size, mtime_ns) -> the probe's future: questions of one video share one probe.
        self._durations: dict[tuple[str, int, int], asyncio.Future[float]] = {}
        self._layouts: dict[tuple[str, int, int], FrameLayout] = {}

    def video_path(self, question: Question) -> Path:
        """The question's video file; DataError naming the folder and the names tried when absent."""
        return locate_video(self._videos_dir, question.videoID)

    async def _decode(self, function: Callable[..., _T], *args: object) -> _T:
        async with self._decoders:
            return await asyncio.to_thread(function, *args)

    async def duration_s(self, question: Question) -> float:
        path = self.video_path(question)
        stat = path.stat()  # a replaced file is probed again, as the sampler's own cache would
        key = (str(path), stat.st_size, stat.st_mtime_ns)
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
        if self._pool is not None:  # the pool queues work itself: one job per worker process
            return await self._pool.uniform(self.video_path(question), count)
        return await self._decode(self._sampler.uniform, self.video_path(question), count)

    async def between(self, question: Question, start_s: float, end_s: float, count: int) -> FrameSet:
        path = self.video_path(question)
        if self._pool is not None:
            return await self._pool.range(path, start_s, end_s, count)
        return await self._decode(self._sampler.range, path, start_s, end_s, count)

    async def layout(self, question: Question) -> FrameLayout:
        """Frame count and rate of the question's video (for the reference protocols' index rules)."""
        path = self.video_path(question)
        stat = path.stat()
        key = (str(path), stat.st_size, stat.st_mtime_ns)
        if key not in self._layouts:  # read once per file identity; questions of a video share it
            self._layouts[key] = await self._decode(frame_layout, path)
        return self._layouts[key]

    async def frames_at(
        self, question: Question, indices: Sequence[int], layout: FrameLayout
    ) -> list[np.ndarray]:
        """Full-resolution RGB frames by decoded index (uncached: each protocol encodes its own way)."""
        return await self._decode(frames_by_index, self.video_path(question), list(indices), layout)

    def subtitle_file(self, question: Question) -> Path | None:
        return locate_subtitles(self._subtitles_dir, question.videoID)

    async def _lines(self, question: Question) -> Subtitles:
        key = question.videoID
        if key not in self._subtitles:
            path = locate_subtitles(self._subtitles_dir, key)
            self._subtitles[key] = await asyncio.to_thread(load_subtitles, path)
        return self._subtitles[key]

    async def lines_at(self, question: Question, timestamps: Sequence[float]) -> tuple[str, ...]:
        return _formatted((await self._lines(question)).nearest(timestamps))

    async def lines_between(self, question: Question, start_s: float, end_s: float) -> tuple[str, ...]:
        return _formatted((await self._lines(question)).overlapping(start_s, end_s))


def _formatted(lines: Sequence[SubtitleLine]) -> tuple[str, ...]:
    return tuple(f"[{format_seconds(line.start_s)}] {line.text}" for line in lines)
