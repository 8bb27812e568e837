"""The on-disk frame cache: hits do no decoding; stale or corrupt entries are misses."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from skillharness.video import FrameCache, FrameSampler, FramesConfig, decoder_stats
from skillharness.video.cache import VideoIdentity


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


def test_cache_writes_do_not_fsync(
    gop_video: Path, sampler: FrameSampler, monkeypatch: pytest.MonkeyPatch
) -> None:
    flushed: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: flushed.append(fd) or real_fsync(fd))
    sampler.uniform(gop_video, 4)
    assert sampler.cache is not None
    assert len(_frame_files(sampler.cache.root)) == 4  # written...
    assert flushed == []  # ...without a single flush: an entry is rebuilt, not recovered


def test_other_writes_still_fsync(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from skillharness.util.atomic import atomic_write_bytes

    flushed: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: flushed.append(fd) or real_fsync(fd))
    atomic_write_bytes(tmp_path / "evidence.json", b"{}")
    assert len(flushed) == 2  # the file and its folder


@pytest.mark.parametrize(
    "header",
    [b'{"width": "wide"}', b"[1, 2]", b"{not json"],
    ids=["bad-field", "not-an-object", "bad-json"],
)
def test_entry_with_a_bad_header_is_a_miss(gop_video: Path, sampler: FrameSampler, header: bytes) -> None:
    assert sampler.cache is not None
    good = sampler.uniform(gop_video, 2)
    victim = _frame_files(sampler.cache.root)[0]
    magic, _, rest = victim.read_bytes().partition(b"\n")
    payload = rest.partition(b"\n")[2]
    victim.write_bytes(magic + b"\n" + header + b"\n" + payload)
    again = sampler.uniform(gop_video, 2)
    assert again.from_cache == 1
    assert again.frames == good.frames


def test_damaged_duration_entry_is_a_miss(gop_video: Path, sampler: FrameSampler) -> None:
    assert sampler.cache is not None
    duration = sampler.duration(gop_video)
    (entry,) = sampler.cache.root.rglob("*.duration")
    damaged = entry.read_bytes()[:-3]  # header line cut: no longer parses
    entry.write_bytes(damaged)
    assert sampler.duration(gop_video) == duration  # a miss: the same answer (the process read the header)
    assert entry.read_bytes() != damaged
    assert FrameCache(sampler.cache.root).get_duration(VideoIdentity.of(gop_video)) == duration  # rewritten


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
