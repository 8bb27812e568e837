"""The sampling rule, and that each frame is the one on screen at its timestamp."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from videokit import frame_index

from skillharness.errors import DataError
from skillharness.video import FrameSampler, range_timestamps, uniform_timestamps, video_duration
from skillharness.video._decode import decode_at

FPS = 25


def test_uniform_timestamps_are_slice_centres() -> None:
    assert uniform_timestamps(10.0, 4) == (1.25, 3.75, 6.25, 8.75)
    assert uniform_timestamps(10.0, 1) == (5.0,)


def test_range_timestamps_are_slice_centres_of_the_range() -> None:
    assert range_timestamps(2.0, 4.0, 4) == (2.25, 2.75, 3.25, 3.75)


@settings(max_examples=200, deadline=None)
@given(
    duration=st.floats(min_value=0.01, max_value=20_000, allow_nan=False),
    count=st.integers(min_value=1, max_value=256),
)
def test_uniform_rule_property(duration: float, count: int) -> None:
    ts = uniform_timestamps(duration, count)
    assert len(ts) == count
    assert ts == tuple(round((i + 0.5) * duration / count, 6) for i in range(count))
    assert all(0 <= t <= duration for t in ts)
    assert list(ts) == sorted(ts)


@pytest.mark.parametrize("count", [0, -3])
def test_zero_frames_is_an_error(count: int) -> None:
    with pytest.raises(DataError, match=f"^{count} frames requested; ask for at least one"):
        uniform_timestamps(10.0, count)


def test_video_duration_reads_the_header(gop_video: Path) -> None:
    assert video_duration(gop_video) == pytest.approx(10.0)


def test_uniform_frames_sit_exactly_where_the_rule_puts_them(gop_video: Path, sampler: FrameSampler) -> None:
    result = sampler.uniform(gop_video, 32)
    assert result.requested_s == uniform_timestamps(10.0, 32)
    assert result.timestamps == result.requested_s
    assert not result.degraded
    for frame in result.frames:
        # The frame on screen at t: presentation time <= t < next frame's.
        assert frame.pts_s <= frame.timestamp_s < frame.pts_s + 1 / FPS + 1e-9
        assert frame.pts_s == pytest.approx(math.floor(frame.timestamp_s * FPS + 1e-9) / FPS)


def test_decoded_frame_is_the_frame_shown_at_each_timestamp(gop_video: Path) -> None:
    timestamps = [*uniform_timestamps(10.0, 32), 0.0, 3.3, 3.96, 3.999, 4.0, 9.99]
    for t, raw in zip(timestamps, decode_at(gop_video, timestamps), strict=True):
        assert raw is not None
        assert frame_index(raw.rgb) == math.floor(round(t * FPS, 6)), t


def test_range_at_the_start_edge(gop_video: Path, sampler: FrameSampler) -> None:
    result = sampler.range(gop_video, 0.0, 0.2, 5)
    assert result.requested_s == (0.02, 0.06, 0.1, 0.14, 0.18)
    assert [f.pts_s for f in result.frames] == pytest.approx([0.0, 0.04, 0.08, 0.12, 0.16])


def test_range_at_the_end_edge_reaches_the_last_frame(gop_video: Path, sampler: FrameSampler) -> None:
    result = sampler.range(gop_video, 9.9, 10.0, 4)
    assert not result.degraded
    assert result.frames[-1].pts_s == pytest.approx(9.96)  # the last of 250 frames at 25 fps
    assert result.requested_s == (9.9125, 9.9375, 9.9625, 9.9875)
    assert [f.pts_s for f in result.frames] == pytest.approx([9.88, 9.92, 9.96, 9.96])


def test_whole_video_as_a_range_equals_uniform(gop_video: Path, sampler: FrameSampler) -> None:
    assert sampler.range(gop_video, 0.0, 10.0, 7).requested_s == sampler.uniform(gop_video, 7).requested_s


@pytest.mark.parametrize(("start", "end"), [(-0.1, 2.0), (8.0, 10.01), (11.0, 12.0), (5.0, 5.0), (6.0, 5.0)])
def test_range_outside_the_video_is_an_error_naming_the_file(
    gop_video: Path, sampler: FrameSampler, start: float, end: float
) -> None:
    with pytest.raises(DataError) as info:
        sampler.range(gop_video, start, end, 4)
    assert str(gop_video) in str(info.value)
    assert not list((sampler.cache.root if sampler.cache else Path()).rglob("*.frame"))


@pytest.mark.parametrize(("start", "end"), [(5.0, 2.0), (5.0, 5.0), (12.0, 11.0), (-1.0, -2.0)])
def test_a_reversed_or_empty_range_says_the_end_must_be_after_the_start(
    gop_video: Path, sampler: FrameSampler, start: float, end: float
) -> None:
    # Even when it also lies outside the video: the order is the mistake to fix first.
    with pytest.raises(DataError) as info:
        sampler.range(gop_video, start, end, 4)
    assert str(info.value) == (
        f"time range [{start}, {end}] of {gop_video} is empty: the end must be after the start"
    )


def test_range_with_zero_count_is_an_error(gop_video: Path, sampler: FrameSampler) -> None:
    with pytest.raises(DataError, match="0 frames requested"):
        sampler.range(gop_video, 1.0, 2.0, 0)


def test_explicit_timestamps_outside_the_video_are_refused(gop_video: Path, sampler: FrameSampler) -> None:
    with pytest.raises(DataError, match="outside the video"):
        sampler.at(gop_video, [1.0, 10.0])
    with pytest.raises(DataError, match="zero frames"):
        sampler.at(gop_video, [])


def test_frames_are_resized_to_the_longest_side_and_never_enlarged(gop_video: Path, tmp_path: Path) -> None:
    from skillharness.video import FramesConfig

    small = FrameSampler(FramesConfig(longest_side=48, cache_dir=tmp_path / "a")).uniform(gop_video, 2)
    assert {(f.width, f.height) for f in small.frames} == {(48, 32)}
    big = FrameSampler(FramesConfig(longest_side=1024, cache_dir=tmp_path / "b")).uniform(gop_video, 2)
    assert {(f.width, f.height) for f in big.frames} == {(96, 64)}
    assert all(f.jpeg.startswith(b"\xff\xd8") for f in small.frames + big.frames)
    assert small.frames[0].data_url().startswith("data:image/jpeg;base64,/9j/")
