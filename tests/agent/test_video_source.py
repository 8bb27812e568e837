"""LocalVideos: a video's duration is probed on a decoder thread once, then served from memory."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from agent_support import question, write_video

from skillharness.agent.video import LocalVideos
from skillharness.errors import DataError
from skillharness.video import FrameSampler, FramesConfig


class _CountingSampler(FrameSampler):
    def __init__(self) -> None:
        super().__init__(FramesConfig(cache_enabled=False))
        self.probes = 0

    def duration(self, video: Path | str) -> float:
        self.probes += 1
        return super().duration(video)


async def test_duration_is_probed_once_per_video(tmp_path: Path) -> None:
    write_video(tmp_path / "vid1.mp4", seconds=4.0)
    write_video(tmp_path / "vid2.mp4", seconds=2.0)
    sampler = _CountingSampler()
    videos = LocalVideos(sampler, tmp_path)
    first = await asyncio.gather(*(videos.duration_s(question(f"q{i}")) for i in range(5)))
    again = await videos.duration_s(question("q9"))
    other = await videos.duration_s(question("q8", video="vid2"))
    assert first == [4.0] * 5  # concurrent questions of one video share one probe
    assert (again, other) == (4.0, 2.0)
    assert sampler.probes == 2


async def test_a_replaced_video_is_probed_again(tmp_path: Path) -> None:
    path = write_video(tmp_path / "vid1.mp4", seconds=4.0)
    sampler = _CountingSampler()
    videos = LocalVideos(sampler, tmp_path)
    assert await videos.duration_s(question()) == 4.0
    write_video(path, seconds=2.0)
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 10**9))
    assert await videos.duration_s(question()) == 2.0
    assert sampler.probes == 2


async def test_a_failed_probe_is_not_remembered(tmp_path: Path) -> None:
    path = tmp_path / "vid1.mp4"
    path.write_bytes(b"not a video")
    sampler = _CountingSampler()
    videos = LocalVideos(sampler, tmp_path)
    for _ in range(2):
        with pytest.raises(DataError):
            await videos.duration_s(question())
    assert sampler.probes == 2


async def test_prefetch_probes_each_video_once_and_skips_failures(tmp_path: Path) -> None:
    write_video(tmp_path / "vid1.mp4", seconds=4.0)
    write_video(tmp_path / "vid2.mp4", seconds=2.0)
    sampler = _CountingSampler()
    videos = LocalVideos(sampler, tmp_path)
    ahead = [question("q1"), question("q2", video="absent"), question("q3"), question("q4", video="vid2")]
    await videos.prefetch_durations(ahead)  # a missing video is left for its question to report
    assert sampler.probes == 2
    assert await videos.duration_s(question("q5", video="vid2")) == 2.0
    assert sampler.probes == 2
    with pytest.raises(DataError, match="no video"):
        await videos.duration_s(question("q2", video="absent"))
