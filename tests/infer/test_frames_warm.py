"""``skillharness frames warm``: a pool's first-message frames land in the cache, once."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from bench_support import Bench
from cli_support import run_cli
from skillharness.data.loader import load_questions
from skillharness.data.pools import load_pools
from skillharness.video import FrameSampler, FramesConfig, locate_video


def _config(tmp_path: Path, bench: Bench, **agent: object) -> Path:
    doc = {
        "data": {
            "questions": str(bench.questions),
            "pools": str(bench.pools),
            "videos_dir": str(bench.root / "videos"),
        },
        "llm": {"model": "never-called", "endpoints": [{"base_url": "http://127.0.0.1:9/v1"}]},
        "agent": {"bundle": str(bench.bundle), "frames": {"cache_dir": str(tmp_path / "frames")}, **agent},
    }
    path = tmp_path / "experiment.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def _val_videos(bench: Bench) -> list[str]:
    wanted = set(load_pools(bench.pools, bench.pools_sha256).questions["val"])
    return sorted({q.videoID for q in load_questions(bench.questions) if q.question_id in wanted})


@pytest.mark.slow
def test_warm_fills_the_cache_the_agent_reads(tmp_path: Path, bench: Bench) -> None:
    config = _config(tmp_path, bench, initial_frames=4)
    first = run_cli("frames", "warm", "--config", str(config), "--pool", "val", "--workers", "2")
    assert first.returncode == 0, first.stderr
    videos = _val_videos(bench)
    assert f"{len(videos)} video(s), {4 * len(videos)} frame(s) decoded, 0 already cached" in first.stdout
    sampler = FrameSampler(FramesConfig(cache_dir=tmp_path / "frames"))
    for video_id in videos:  # exactly what the first message asks for is now a cache hit
        assert sampler.uniform(locate_video(bench.root / "videos", video_id), 4).from_cache == 4
    again = run_cli("frames", "warm", "--config", str(config), "--pool", "val")
    assert again.returncode == 0, again.stderr
    assert f"0 frame(s) decoded, {4 * len(videos)} already cached" in again.stdout


@pytest.mark.slow
def test_warm_without_vision_has_nothing_to_do(tmp_path: Path, bench: Bench) -> None:
    result = run_cli("frames", "warm", "--config", str(_config(tmp_path, bench, vision=False)))
    assert result.returncode == 0, result.stderr
    assert "nothing to warm" in result.stdout
    assert not (tmp_path / "frames").exists()


@pytest.mark.slow
def test_warm_names_an_unknown_pool(tmp_path: Path, bench: Bench) -> None:
    result = run_cli("frames", "warm", "--config", str(_config(tmp_path, bench)), "--pool", "nope")
    assert result.returncode == 2
    assert "nope" in result.stderr
