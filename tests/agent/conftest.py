"""Agent fixtures: a real generated video, and a run log over a SQLite file (`sqlite_url`)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from agent_support import write_video

from skillharness.agent.video import LocalVideos
from skillharness.llm.types import SamplingParams
from skillharness.store import RunKind, RunLog, RunProvenance
from skillharness.video import FrameSampler, FramesConfig

SRT = """1
00:00:00,500 --> 00:00:01,500
<font color="#ffffff">first line</font>

2
00:00:02,000 --> 00:00:03,000
second line
"""


@pytest.fixture(scope="session")
def media_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("media")
    write_video(root / "videos" / "vid1.mp4")
    (root / "subtitles").mkdir()
    (root / "subtitles" / "vid1.srt").write_text(SRT)
    return root


@pytest.fixture(scope="session")
def cook_media(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The cooking video and subtitles the captured reference protocol texts were rendered for."""
    root = tmp_path_factory.mktemp("cook")
    write_video(root / "videos" / "cook.mp4", seconds=20.0, fps=10, size=(96, 64))
    (root / "subtitles").mkdir()
    sample = Path(__file__).parent / "fixtures" / "protocols" / "sample.srt"
    (root / "subtitles" / "cook.srt").write_bytes(sample.read_bytes())
    return root


@pytest.fixture
def videos(media_dir: Path, tmp_path: Path) -> LocalVideos:
    sampler = FrameSampler(FramesConfig(longest_side=64, cache_dir=tmp_path / "frames"))
    return LocalVideos(sampler, media_dir / "videos", media_dir / "subtitles")


@pytest.fixture
async def run_log(sqlite_url: str) -> AsyncIterator[RunLog]:
    provenance = RunProvenance(
        run_id="run-1",
        kind=RunKind.INFER,
        config_hash="c",
        bundle_hash="b",
        model="sim-vl",
        endpoints=("http://127.0.0.1:1/v1",),
        sampling=SamplingParams(temperature=0.0),
    )
    async with await RunLog.open(sqlite_url, provenance) as log:
        yield log
