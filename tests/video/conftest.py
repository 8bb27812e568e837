"""Fixtures for the video tests: real videos generated with PyAV (see videokit.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from videokit import WIDTH, write_video

from skillharness.video import FrameSampler, FramesConfig


@pytest.fixture(scope="session")
def video_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("videos")


@pytest.fixture(scope="session")
def gop_video(video_dir: Path) -> Path:
    """10 s, 25 fps, keyframe every 2 s, B-frames, index at the front (faststart)."""
    return write_video(video_dir / "gop.mp4")


@pytest.fixture(scope="session")
def tail_index_video(video_dir: Path) -> Path:
    """Same content, index (moov) at the end of the file: a cut file has no index at all."""
    return write_video(video_dir / "tail_index.mp4", faststart=False)


@pytest.fixture
def copy_video(tmp_path: Path) -> Callable[[Path], Path]:
    """Copy a session video into this test's folder (tests that cut or touch bytes get their own)."""

    def copy(source: Path) -> Path:
        target = tmp_path / source.name
        target.write_bytes(source.read_bytes())
        return target

    return copy


@pytest.fixture
def sampler(tmp_path: Path) -> FrameSampler:
    """A sampler with full-size frames and its own cache folder."""
    return FrameSampler(FramesConfig(longest_side=WIDTH, jpeg_quality=90, cache_dir=tmp_path / "cache"))
