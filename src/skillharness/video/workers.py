"""Frame sampling on every core: a pool of worker processes, each with its own :class:`FrameSampler`.

Decoding and JPEG encoding hold the GIL for much of their time, so threads in the process that
also runs the event loop cannot use a second core and slow the loop down. :class:`DecodePool`
runs :meth:`FrameSampler.uniform` and :meth:`FrameSampler.range` in worker processes instead
(one per usable core). The workers run the same code on the same cache, so their frames are the
very bytes an in-process sampler returns; only the ``FrameSet`` (a few JPEGs) crosses back.

Workers come from a ``forkserver`` that has imported the video layer once: forking from the main
process, which holds threads and open sockets, could copy a held lock; spawning a fresh
interpreter per worker would import PyAV and numpy again each time.

A frame set the cache holds whole is read in the calling process (a thread, a few file reads)
and never reaches a worker; the pool starts on the first miss. So a text-only run, or a run
over warm caches, never pays for starting workers.

The workers die with the process that owns the pool, however it ends (even by SIGKILL): see
:func:`skillharness.util.owner.exit_with_owner`. Once they are gone, the forkserver and
multiprocessing's resource tracker see the end of their pipes and exit too, so a killed run
leaves no process behind.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
from collections.abc import Iterator, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor
from pathlib import Path
from typing import Any

from skillharness.errors import DataError, SkillharnessError
from skillharness.util.owner import exit_with_owner, start_forkserver_ignoring_sigint
from skillharness.video.config import FramesConfig
from skillharness.video.frames import FrameSampler
from skillharness.video.types import FrameSet, Window

__all__ = ["DecodePool", "usable_cores"]

# One sampler per worker process and config (the config's JSON is the key): built once, reused.
_SAMPLERS: dict[str, FrameSampler] = {}


def usable_cores() -> int:
    """Cores this process may run on (its CPU affinity), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def _sample(config_json: str, method: str, args: tuple[Any, ...]) -> FrameSet | tuple[str, str, dict]:
    """Worker side: run one sampler call; a project error comes back as data (it may not pickle)."""
    sampler = _SAMPLERS.get(config_json)
    if sampler is None:
        sampler = _SAMPLERS[config_json] = FrameSampler(FramesConfig.model_validate_json(config_json))
    try:
        return getattr(sampler, method)(*args)  # type: ignore[no-any-return]
    except SkillharnessError as exc:
        return (type(exc).__name__, exc.message, dict(exc.context))


def _error(data: tuple[str, str, dict]) -> SkillharnessError:
    name, message, context = data
    if name == DataError.__name__:
        return DataError(message, **context)
    return SkillharnessError(f"{name}: {message}", **context)


class DecodePool:
    """Samples frames in worker processes, one per usable core.

    Args:
        config: Resize, quality and cache settings (the workers' samplers use exactly these).
        workers: How many processes; default :func:`usable_cores`.
    """

    def __init__(self, config: FramesConfig, workers: int | None = None) -> None:
        self.config = config
        self.workers = workers or usable_cores()
        self._config_json = config.model_dump_json()
        self._executor: Executor | None = None
        # Cache reads in this process; the same cache the workers write, so a hit is their bytes.
        self._reader = FrameSampler(config) if config.cache_enabled else None
        self.served_from_cache = 0  # frame sets read here without a worker

    def _pool(self) -> Executor:
        if self._executor is None:
            context = multiprocessing.get_context("forkserver")
            context.set_forkserver_preload(["skillharness.video.workers"])
            start_forkserver_ignoring_sigint()  # Ctrl-C is the owner's to handle, not the workers'
            self._executor = ProcessPoolExecutor(
                self.workers, mp_context=context, initializer=exit_with_owner, initargs=(os.getpid(),)
            )
        return self._executor

    async def _call(self, method: str, *args: Any) -> FrameSet:
        loop = asyncio.get_running_loop()
        result = await loop.run_in_executor(self._pool(), _sample, self._config_json, method, args)
        if isinstance(result, FrameSet):
            return result
        raise _error(result)

    async def _cached(self, method: str, *args: Any) -> FrameSet | None:
        if self._reader is None:
            return None
        hit: FrameSet | None = await asyncio.to_thread(getattr(self._reader, method), *args)
        self.served_from_cache += hit is not None
        return hit

    async def uniform(self, video: Path | str, count: int, window: Window | None = None) -> FrameSet:
        """As :meth:`FrameSampler.uniform`: from the cache here, else in a worker process."""
        hit = await self._cached("cached_uniform", Path(video), count, window)
        return hit if hit is not None else await self._call("uniform", Path(video), count, window)

    async def range(
        self, video: Path | str, start_s: float, end_s: float, count: int, window: Window | None = None
    ) -> FrameSet:
        """As :meth:`FrameSampler.range`: from the cache here, else in a worker process."""
        hit = await self._cached("cached_range", Path(video), start_s, end_s, count, window)
        if hit is not None:
            return hit
        return await self._call("range", Path(video), start_s, end_s, count, window)

    @property
    def started(self) -> bool:
        """Whether worker processes were started (the first cache miss starts them)."""
        return self._executor is not None

    def map_uniform(
        self, videos: Sequence[Path], count: int, windows: Sequence[Window | None] | None = None
    ) -> Iterator[FrameSet | SkillharnessError]:
        """``uniform(video, count, window)`` for each video (and its clip window, if any), in order,
        outside an event loop.

        Each item is the ``FrameSet`` or the error that video raised: one bad file stops nothing.
        """
        pool = self._pool()
        windows = windows if windows is not None else [None] * len(videos)
        futures = [
            pool.submit(_sample, self._config_json, "uniform", (v, count, w))
            for v, w in zip(videos, windows, strict=True)
        ]
        for future in futures:
            result = future.result()
            yield result if isinstance(result, FrameSet) else _error(result)

    def close(self) -> None:
        """Stop the workers (idempotent); queued work is cancelled."""
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=True)
            self._executor = None
