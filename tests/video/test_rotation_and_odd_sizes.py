"""Frames are shown as a player shows them: rotation metadata applied; odd sizes and tiny videos work."""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path

import av
import numpy as np
import pytest
from PIL import Image

from skillharness.video import Frame, FrameSampler, FramesConfig, uniform_timestamps, video_duration
from skillharness.video._decode import decode_all_at, decode_at
from skillharness.video.cache import VideoIdentity


def _write(path: Path, *, size: tuple[int, int], frames: int, rotation: int | None = None) -> Path:
    """Frames whose left half is white and right half black (so a rotation is visible)."""
    width, height = size
    with av.open(str(path), "w", format="mp4") as out:
        stream = out.add_stream("libx264", rate=10)
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        if rotation is not None:
            stream.set_display_rotation(rotation)
        rgb = np.zeros((height, width, 3), dtype=np.uint8)
        rgb[:, : width // 2] = 255
        for _ in range(frames):
            for packet in stream.encode(av.VideoFrame.from_ndarray(rgb, format="rgb24")):
                out.mux(packet)
        for packet in stream.encode():
            out.mux(packet)
    return path


def _sampler(tmp_path: Path) -> FrameSampler:
    return FrameSampler(FramesConfig(longest_side=448, cache_dir=tmp_path / "cache"))


def _grey(jpeg: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(jpeg)).convert("L"), dtype=float)


@pytest.mark.parametrize(("rotation", "white"), [(90, "bottom"), (-90, "top"), (180, "right")])
def test_rotation_metadata_is_applied_like_a_player(tmp_path: Path, rotation: int, white: str) -> None:
    video = _write(tmp_path / "phone.mp4", size=(64, 32), frames=5, rotation=rotation)
    frame = _sampler(tmp_path).uniform(video, 1).frames[0]
    grey = _grey(frame.jpeg)
    if abs(rotation) == 90:
        assert (frame.width, frame.height) == (32, 64)  # portrait, as recorded
        top, bottom = grey[:28].mean(), grey[36:].mean()
        assert (top > bottom) == (white == "top")
    else:
        assert (frame.width, frame.height) == (64, 32)
        assert grey[:, 36:].mean() > grey[:, :28].mean()  # upside down: the white half is on the right


def test_rotated_seek_frames_equal_decode_all_frames(tmp_path: Path) -> None:
    video = _write(tmp_path / "phone.mp4", size=(64, 32), frames=20, rotation=90)
    times = [0.05, 0.95, 1.55]
    for seek, full in zip(decode_at(video, times), decode_all_at(video, times), strict=True):
        assert seek is not None
        assert full is not None
        assert seek.rgb.shape == (64, 32, 3)
        assert np.array_equal(seek.rgb, full.rgb)


@pytest.mark.parametrize(("size", "frames"), [((66, 50), 1), ((98, 34), 2), ((640, 18), 3)])
def test_tiny_videos_and_odd_aspect_ratios_sample_every_frame(
    tmp_path: Path, size: tuple[int, int], frames: int
) -> None:
    video = _write(tmp_path / "tiny.mp4", size=size, frames=frames)
    result = _sampler(tmp_path).uniform(video, 8)
    assert len(result.frames) == 8
    assert not result.degraded
    assert all(max(f.width, f.height) <= 448 and min(f.width, f.height) >= 1 for f in result.frames)


def test_frames_cached_before_rotation_was_applied_are_not_served(tmp_path: Path) -> None:
    video = _write(tmp_path / "phone.mp4", size=(64, 32), frames=5, rotation=90)
    sampler = _sampler(tmp_path)
    assert sampler.cache is not None
    (t,) = uniform_timestamps(video_duration(video), 1)
    identity = VideoIdentity.of(video)
    parts = [1, identity.digest(), round(t * 1_000_000), 448, 85]  # the version-1 (unrotated) key
    stale_key = hashlib.sha256(json.dumps(parts).encode()).hexdigest()
    sampler.cache.put_frame(stale_key, Frame(t, 0.0, b"\xff\xd8stale", 64, 32))
    frame = sampler.uniform(video, 1).frames[0]
    assert frame.jpeg != b"\xff\xd8stale"
    assert (frame.width, frame.height) == (32, 64)
