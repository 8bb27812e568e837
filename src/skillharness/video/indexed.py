"""Frames by decoded position: what evaluations that index a video's frames (0, 1, 2, ...) need.

The reference evaluations pick frames by index over the decoded frame count (decord's
``len(vr)``, OpenCV's ``CAP_PROP_FRAME_COUNT``). Frame ``i`` of a constant-frame-rate video is on
screen during ``[i / fps, (i + 1) / fps)``; it is fetched at the middle of that span, so float
rounding of presentation times can never land on a neighbour.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import av
import av.error
import numpy as np

from skillharness.errors import DataError
from skillharness.video._decode import decode_at, probe

__all__ = ["FrameLayout", "frame_layout", "frames_by_index"]


@dataclass(frozen=True)
class FrameLayout:
    """How many frames a video decodes to, and at what rate."""

    total_frames: int
    fps: float


def frame_layout(path: Path | str) -> FrameLayout:
    """The video's frame count (the container's, else duration × rate) and average frame rate.

    Raises:
        DataError: missing or unreadable file, or no frame rate to index by.
    """
    path = Path(path)
    info = probe(path)
    if info.fps <= 0:
        raise DataError(f"{path} states no frame rate: its frames cannot be indexed", file=str(path))
    try:
        with av.open(str(path)) as container:
            counted = int(container.streams.video[0].frames or 0)
    except (av.error.FFmpegError, OSError, IndexError) as exc:
        raise DataError(f"cannot read video {path}: {exc}", file=str(path)) from exc
    total = counted if counted > 0 else round(info.duration_s * info.fps)
    return FrameLayout(max(1, total), info.fps)


def frames_by_index(path: Path | str, indices: Sequence[int], layout: FrameLayout) -> list[np.ndarray]:
    """The full-resolution RGB frames at ``indices`` (in the order given).

    Raises:
        DataError: an index outside the video, or a frame that cannot be decoded (a reference
            evaluation would have failed on it too, so nothing is silently replaced).
    """
    path = Path(path)
    outside = [i for i in indices if not 0 <= i < layout.total_frames]
    if outside:
        raise DataError(f"frame indices {outside} are outside {path} ({layout.total_frames} frames)")
    raw = decode_at(path, [(i + 0.5) / layout.fps for i in indices])
    missing = [i for i, frame in zip(indices, raw, strict=True) if frame is None]
    if missing:
        raise DataError(f"frames {missing} of {path} could not be decoded", file=str(path))
    return [frame.rgb for frame in raw if frame is not None]
