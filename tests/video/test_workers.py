"""Frame sampling in worker processes: the same bytes as in-process, errors with their context."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from videokit import WIDTH

from proc_support import Proc, descendants, end, survivors
from skillharness.errors import DataError
from skillharness.video import DecodePool, FrameSampler, FramesConfig, usable_cores


@pytest.fixture
def pool(tmp_path: Path) -> Iterator[DecodePool]:
    config = FramesConfig(longest_side=WIDTH, jpeg_quality=90, cache_dir=tmp_path / "pool-cache")
    decode_pool = DecodePool(config, workers=2)
    yield decode_pool
    decode_pool.close()


def test_pool_frames_are_the_in_process_frames(gop_video: Path, pool: DecodePool, tmp_path: Path) -> None:
    local = FrameSampler(pool.config.model_copy(update={"cache_enabled": False}))

    async def both() -> tuple[object, object]:
        return await asyncio.gather(pool.uniform(gop_video, 6), pool.range(gop_video, 2.0, 7.5, 4))

    uniform, ranged = asyncio.run(both())
    assert uniform.frames == local.uniform(gop_video, 6).frames  # type: ignore[attr-defined]
    assert ranged.frames == local.range(gop_video, 2.0, 7.5, 4).frames  # type: ignore[attr-defined]
    assert uniform.from_cache == 0  # type: ignore[attr-defined]


def test_pool_workers_fill_the_shared_cache(gop_video: Path, pool: DecodePool) -> None:
    first = asyncio.run(pool.uniform(gop_video, 5))
    again = FrameSampler(pool.config).uniform(gop_video, 5)  # in this process, same cache folder
    assert again.from_cache == 5
    assert again.frames == first.frames


def test_pool_reports_a_bad_video_as_data_error_with_its_file(tmp_path: Path, pool: DecodePool) -> None:
    bad = tmp_path / "not-a-video.mp4"
    bad.write_bytes(b"this is text, not a video")
    with pytest.raises(DataError) as caught:
        asyncio.run(pool.uniform(bad, 3))
    assert caught.value.context["file"] == str(bad)


def test_map_uniform_keeps_going_past_a_bad_file(gop_video: Path, pool: DecodePool, tmp_path: Path) -> None:
    bad = tmp_path / "missing.mp4"
    results = list(pool.map_uniform([gop_video, bad, gop_video], 2))
    assert isinstance(results[1], DataError)
    assert results[0].frames == results[2].frames  # type: ignore[union-attr]


def test_pool_is_sized_to_the_machine() -> None:
    assert DecodePool(FramesConfig()).workers == usable_cores() >= 1


def test_a_warm_cache_is_served_without_starting_a_worker(gop_video: Path, tmp_path: Path) -> None:
    config = FramesConfig(longest_side=WIDTH, jpeg_quality=90, cache_dir=tmp_path / "warm-cache")
    filled = FrameSampler(config)
    uniform, ranged = filled.uniform(gop_video, 6), filled.range(gop_video, 2.0, 7.5, 4)
    pool = DecodePool(config, workers=2)
    try:

        async def both() -> tuple[object, object]:
            return await asyncio.gather(pool.uniform(gop_video, 6), pool.range(gop_video, 2.0, 7.5, 4))

        warm_uniform, warm_range = asyncio.run(both())
        assert not pool.started  # every frame came from the cache: no worker process was started
        assert pool.served_from_cache == 2
        assert warm_uniform.frames == uniform.frames  # type: ignore[attr-defined]
        assert warm_range.frames == ranged.frames  # type: ignore[attr-defined]
        assert warm_uniform.from_cache == 6  # type: ignore[attr-defined]
        partly = asyncio.run(pool.uniform(gop_video, 7))  # new timestamps: a miss goes to a worker
        assert pool.started
        assert len(partly.frames) == 7
    finally:
        pool.close()


def test_a_cached_range_outside_the_video_still_raises_in_the_worker(gop_video: Path, tmp_path: Path) -> None:
    config = FramesConfig(longest_side=WIDTH, jpeg_quality=90, cache_dir=tmp_path / "range-cache")
    duration = FrameSampler(config).duration(gop_video)  # cached, so only the range is wrong
    pool = DecodePool(config, workers=1)
    try:
        with pytest.raises(DataError, match="outside the video"):
            asyncio.run(pool.range(gop_video, 1.0, duration + 5, 3))
    finally:
        pool.close()


def test_without_a_cache_every_request_goes_to_a_worker(gop_video: Path) -> None:
    pool = DecodePool(FramesConfig(longest_side=WIDTH, cache_enabled=False), workers=1)
    try:
        first = asyncio.run(pool.uniform(gop_video, 3))
        assert pool.started
        assert pool.served_from_cache == 0
        assert first.from_cache == 0
    finally:
        pool.close()


# A pool owner as a run is one: its own process, decoding ``argv[2]`` copies of ``argv[1]`` uncached.
_OWNER = """
import sys
from pathlib import Path
from skillharness.video import DecodePool, FramesConfig
pool = DecodePool(FramesConfig(cache_enabled=False), workers=2)
for done, _ in enumerate(pool.map_uniform([Path(sys.argv[1])] * int(sys.argv[2]), 8)):
    if done == 0:
        print("decoding", flush=True)
pool.close()
"""


def _owner_tree(video: Path, copies: int, *, kill: bool) -> tuple[set[Proc], int]:
    """Start an owner, record its process tree once it decodes, kill it or let it finish."""
    owner = subprocess.Popen(
        [sys.executable, "-c", _OWNER, str(video), str(copies)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert owner.stdout is not None
        assert owner.stdout.readline() == "decoding\n"
        tree = descendants(owner.pid)
        if kill:
            os.kill(owner.pid, signal.SIGKILL)
        return tree, owner.wait(timeout=120)
    finally:
        owner.kill()
        owner.wait()


@pytest.mark.slow
def test_p5_sigkill_of_the_owner_mid_decode_leaves_no_worker_forkserver_or_tracker(gop_video: Path) -> None:
    tree, code = _owner_tree(gop_video, 400, kill=True)  # 400 decodes: the workers are busy
    assert code == -signal.SIGKILL
    assert sum("forkserver" in p.args for p in tree) == 3, tree  # the server and its 2 workers
    assert any("resource_tracker" in p.args for p in tree), tree
    left = survivors(tree)
    end(left)
    assert left == [], f"outlived the killed owner: {left}"


@pytest.mark.slow
def test_p5_a_clean_exit_leaves_no_decode_process(gop_video: Path) -> None:
    tree, code = _owner_tree(gop_video, 4, kill=False)
    assert code == 0
    assert sum("forkserver" in p.args for p in tree) == 3, tree
    left = survivors(tree)
    end(left)
    assert left == [], f"outlived the owner's clean exit: {left}"
