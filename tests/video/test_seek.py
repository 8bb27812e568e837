"""Seek-based decoding returns exactly the pixels a full decode gives, without decoding everything."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from skillharness.video import decoder_stats, uniform_timestamps
from skillharness.video._decode import decode_all_at, decode_at


def _timestamps() -> list[float]:
    rng = random.Random(7)
    # Uniform samples, keyframe instants and their neighbours, the edges, and random times.
    special = [0.0, 1.96, 1.999, 2.0, 2.04, 3.98, 4.0, 8.0, 9.95, 9.999]
    return [*uniform_timestamps(10.0, 32), *special, *(round(rng.uniform(0, 10), 3) for _ in range(20))]


def test_seek_frames_are_pixel_identical_to_decode_all(gop_video: Path) -> None:
    timestamps = _timestamps()
    seek = decode_at(gop_video, timestamps)
    full = decode_all_at(gop_video, timestamps)
    for t, a, b in zip(timestamps, seek, full, strict=True):
        assert a is not None, t
        assert b is not None, t
        assert a.pts_s == pytest.approx(b.pts_s), t
        assert np.array_equal(a.rgb, b.rgb), t


def test_seek_based_sampling_never_decodes_the_whole_file(gop_video: Path) -> None:
    before = decoder_stats()
    decode_at(gop_video, [9.5])  # one late frame: one seek, then at most one GOP (50 frames) + lookahead
    after = decoder_stats()
    assert after.seeks - before.seeks == 1
    assert 0 < after.frames_decoded - before.frames_decoded <= 60


def test_uniform_32_frames_decode_far_fewer_frames_than_the_file_has(tmp_path: Path) -> None:
    from videokit import write_video

    video = write_video(tmp_path / "long.mp4", seconds=40, fps=25, keyframe_s=5)  # 1000 frames
    before = decoder_stats()
    frames = decode_at(video, uniform_timestamps(40.0, 8))
    decoded = decoder_stats().frames_decoded - before.frames_decoded
    assert all(f is not None for f in frames)
    assert decoded < 1000 * 0.75


def test_request_order_is_kept_for_unsorted_and_duplicate_timestamps(gop_video: Path) -> None:
    timestamps = [7.0, 1.0, 7.0, 0.5]
    frames = decode_at(gop_video, timestamps)
    assert [f.pts_s if f else None for f in frames] == pytest.approx([7.0, 1.0, 7.0, 0.48])
    assert frames[0] is not None
    assert frames[2] is not None
    assert np.array_equal(frames[0].rgb, frames[2].rgb)


def test_non_reference_frames_far_before_the_target_are_skipped_yet_pixels_match(gop_video: Path) -> None:
    # Keyframes at 0, 2, 4 ... s; 3.9 s is 48 frames after the keyframe at 2.0 s. Most of them are
    # B-frames nothing refers to, so far fewer than 48 frames need decoding.
    before = decoder_stats()
    (seek,) = decode_at(gop_video, [3.9])
    decoded = decoder_stats().frames_decoded - before.frames_decoded
    (full,) = decode_all_at(gop_video, [3.9])
    assert seek is not None
    assert full is not None
    assert decoded < 40
    assert seek.pts_s == pytest.approx(3.88)
    assert np.array_equal(seek.rgb, full.rgb)
