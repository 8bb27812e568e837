"""Bad input: clear DataErrors naming the file, nothing partial cached; partly bad input: degraded."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from videokit import write_audio_only

from skillharness.errors import DataError
from skillharness.video import FrameSampler, uniform_timestamps, video_duration
from skillharness.video._decode import decode_at


def _no_frames_cached(sampler: FrameSampler) -> bool:
    return sampler.cache is None or not list(sampler.cache.root.rglob("*.frame"))


def _assert_data_error(call: Callable[[], object], video: Path, match: str = "") -> DataError:
    with pytest.raises(DataError, match=match) as info:
        call()
    assert str(video) in str(info.value)
    assert info.value.context["file"] == str(video)
    return info.value


def test_missing_file(tmp_path: Path, sampler: FrameSampler) -> None:
    video = tmp_path / "nope.mp4"
    _assert_data_error(lambda: sampler.uniform(video, 4), video, "not found")
    _assert_data_error(lambda: video_duration(video), video, "not found")
    assert _no_frames_cached(sampler)


def test_not_a_video(tmp_path: Path, sampler: FrameSampler) -> None:
    video = tmp_path / "notes.mp4"
    video.write_text("this is not a video\n" * 100)
    _assert_data_error(lambda: sampler.uniform(video, 4), video, "cannot read video")
    assert _no_frames_cached(sampler)


def test_audio_only_file(tmp_path: Path, sampler: FrameSampler) -> None:
    video = write_audio_only(tmp_path / "speech.mp4")
    _assert_data_error(lambda: sampler.uniform(video, 4), video, "no video stream")
    assert _no_frames_cached(sampler)


def test_truncated_file_without_its_index_is_unreadable(
    tail_index_video: Path, sampler: FrameSampler, copy_video: Callable[[Path], Path]
) -> None:
    video = copy_video(tail_index_video)
    data = video.read_bytes()
    video.write_bytes(data[: len(data) * 6 // 10])  # the moov index was at the end
    _assert_data_error(lambda: sampler.uniform(video, 8), video, "cannot read video")
    assert _no_frames_cached(sampler)


def test_p1_5_truncated_video_gives_the_frames_it_has_and_is_degraded(
    gop_video: Path, sampler: FrameSampler, copy_video: Callable[[Path], Path]
) -> None:
    video = copy_video(gop_video)
    data = video.read_bytes()
    video.write_bytes(data[: len(data) // 2])  # index intact, second half of the pictures gone
    result = sampler.uniform(video, 10)
    assert result.degraded
    assert result.requested_s == uniform_timestamps(10.0, 10)
    assert result.timestamps == result.requested_s[: len(result.frames)]
    assert result.failed_timestamps == result.requested_s[len(result.frames) :]
    assert 2 <= len(result.frames) <= 8
    # The frames it did get are the true ones (same JPEG as from the intact file).
    intact = FrameSampler(sampler.config, cache=None).at(gop_video, list(result.timestamps))
    assert intact.frames == result.frames


def test_corrupt_bytes_in_the_middle_fail_only_the_frames_they_hit(
    gop_video: Path, sampler: FrameSampler, copy_video: Callable[[Path], Path]
) -> None:
    video = copy_video(gop_video)
    data = bytearray(video.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 3000] = np.random.default_rng(1).integers(0, 256, 3000, dtype=np.uint8).tobytes()
    video.write_bytes(bytes(data))
    timestamps = uniform_timestamps(10.0, 10)
    damaged, intact = decode_at(video, timestamps), decode_at(gop_video, timestamps)
    assert any(frame is None for frame in damaged)
    good = [(a, b) for a, b in zip(damaged, intact, strict=True) if a is not None]
    assert len(good) >= 5
    assert all(b is not None and np.array_equal(a.rgb, b.rgb) for a, b in good)
    result = sampler.uniform(video, 10)
    assert result.degraded
    assert len(result.frames) + len(result.failed_timestamps) == 10


def test_a_video_with_no_decodable_frame_is_an_error_and_caches_nothing(
    gop_video: Path, sampler: FrameSampler, copy_video: Callable[[Path], Path]
) -> None:
    video = copy_video(gop_video)
    data = video.read_bytes()
    mdat = data.index(b"mdat")
    video.write_bytes(data[: mdat + 64])  # the index survives, the pictures do not
    _assert_data_error(lambda: sampler.uniform(video, 6), video, "no frame")
    assert _no_frames_cached(sampler)


def test_degraded_results_cache_only_the_good_frames(
    gop_video: Path, sampler: FrameSampler, copy_video: Callable[[Path], Path]
) -> None:
    video = copy_video(gop_video)
    data = video.read_bytes()
    video.write_bytes(data[: len(data) // 2])
    first = sampler.uniform(video, 10)
    assert sampler.cache is not None
    assert len(list(sampler.cache.root.rglob("*.frame"))) == len(first.frames)
    second = sampler.uniform(video, 10)
    assert second.from_cache == len(first.frames)
    assert second.failed_timestamps == first.failed_timestamps  # failures are retried, not remembered


def test_a_folder_is_named_as_a_folder_not_as_missing(tmp_path: Path, sampler: FrameSampler) -> None:
    video = tmp_path / "clip.mp4"
    video.mkdir()
    _assert_data_error(lambda: sampler.uniform(video, 4), video, "is a folder, not a video file")
    _assert_data_error(lambda: video_duration(video), video, "is a folder, not a video file")


def test_an_empty_file_says_it_is_empty(tmp_path: Path, sampler: FrameSampler) -> None:
    video = tmp_path / "empty.mp4"
    video.write_bytes(b"")
    _assert_data_error(lambda: sampler.uniform(video, 4), video, r"the file is empty \(0 bytes\)")
    assert _no_frames_cached(sampler)
