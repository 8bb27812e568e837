"""The on-disk frame cache: hits do no decoding; stale or corrupt entries are misses."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from skillharness.video import FrameCache, FrameSampler, FramesConfig, decoder_stats


def _frame_files(root: Path) -> list[Path]:
    return sorted(root.rglob("*.frame"))


def test_cache_hit_does_no_decoding(gop_video: Path, sampler: FrameSampler) -> None:
    first = sampler.uniform(gop_video, 16)
    assert first.from_cache == 0
    before = decoder_stats()
    second = sampler.uniform(gop_video, 16)
    after = decoder_stats()
    assert (after.opens, after.seeks, after.frames_decoded) == (
        before.opens,
        before.seeks,
        before.frames_decoded,
    )
    assert second.from_cache == 16
    assert second.frames == first.frames


def test_partial_hit_decodes_only_the_missing_frames(gop_video: Path, sampler: FrameSampler) -> None:
    sampler.at(gop_video, [1.0, 5.0])
    before = decoder_stats()
    result = sampler.at(gop_video, [1.0, 5.0, 9.0])
    assert result.from_cache == 2
    assert decoder_stats().seeks - before.seeks == 1


def test_other_size_or_quality_is_a_miss(gop_video: Path, tmp_path: Path) -> None:
    cache = FrameCache(tmp_path / "cache")
    FrameSampler(FramesConfig(longest_side=96, jpeg_quality=90), cache=cache).uniform(gop_video, 4)
    assert (
        FrameSampler(FramesConfig(longest_side=96, jpeg_quality=50), cache=cache)
        .uniform(gop_video, 4)
        .from_cache
        == 0
    )
    assert (
        FrameSampler(FramesConfig(longest_side=48, jpeg_quality=90), cache=cache)
        .uniform(gop_video, 4)
        .from_cache
        == 0
    )
    assert (
        FrameSampler(FramesConfig(longest_side=96, jpeg_quality=90), cache=cache)
        .uniform(gop_video, 4)
        .from_cache
        == 4
    )


def test_a_changed_video_file_is_a_miss(
    gop_video: Path, sampler: FrameSampler, copy_video: Callable[[Path], Path]
) -> None:
    video = copy_video(gop_video)
    sampler.uniform(video, 4)
    stat = video.stat()
    os.utime(video, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert sampler.uniform(video, 4).from_cache == 0


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: data[: len(data) // 2],  # torn write
        lambda data: b"",  # empty file
        lambda data: b"garbage" + data[7:],  # bad magic
        lambda data: data[:-10] + bytes(10),  # payload no longer matches its checksum
    ],
    ids=["truncated", "empty", "bad-magic", "bad-checksum"],
)
def test_refuted_guarded_deserialization_corrupt_cache_file_is_a_miss(
    gop_video: Path, sampler: FrameSampler, damage: Callable[[bytes], bytes]
) -> None:
    assert sampler.cache is not None
    good = sampler.uniform(gop_video, 3)
    files = _frame_files(sampler.cache.root)
    assert len(files) == 3
    victim = files[0]
    victim.write_bytes(damage(victim.read_bytes()))
    before = decoder_stats()
    again = sampler.uniform(gop_video, 3)
    assert again.from_cache == 2
    assert decoder_stats().frames_decoded > before.frames_decoded  # decoded afresh
    assert again.frames == good.frames  # same JPEG bytes as the first time
    assert victim.read_bytes() != damage(victim.read_bytes())  # rewritten with a good entry


def test_cache_entries_are_written_atomically(gop_video: Path, sampler: FrameSampler) -> None:
    assert sampler.cache is not None
    sampler.uniform(gop_video, 5)
    names = [p.name for p in sampler.cache.root.rglob("*") if p.is_file()]
    assert not [n for n in names if n.endswith(".tmp")]  # no temp files left behind


def test_cache_can_be_disabled(gop_video: Path, tmp_path: Path) -> None:
    sampler = FrameSampler(FramesConfig(cache_enabled=False, cache_dir=tmp_path / "never"))
    sampler.uniform(gop_video, 2)
    assert sampler.uniform(gop_video, 2).from_cache == 0
    assert not (tmp_path / "never").exists()


def test_default_cache_dir_is_under_the_user_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from skillharness.video import default_cache_dir

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert default_cache_dir() == tmp_path / "skillharness" / "frames"
    assert FrameSampler(FramesConfig()).cache.root == tmp_path / "skillharness" / "frames"  # type: ignore[union-attr]
