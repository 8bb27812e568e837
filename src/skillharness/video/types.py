"""The frame records handed to the agent: one sampled frame, and the result of one sampling request."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Frame", "FrameSet", "Window"]


@dataclass(frozen=True)
class Window:
    """The stretch ``[start_s, end_s]`` of a video a question is about (seconds into the file).

    Everything sampled through a window is on the window's own timeline: time 0 is ``start_s``,
    the duration is the window's length, and no frame or subtitle outside it is ever shown.
    """

    start_s: float
    end_s: float

    def __post_init__(self) -> None:
        if not (0 <= self.start_s < self.end_s):
            raise ValueError(f"a window needs 0 <= start < end, got [{self.start_s}, {self.end_s}]")

    def label(self) -> str:
        return f"[{self.start_s:g}s, {self.end_s:g}s]"


@dataclass(frozen=True)
class Frame:
    """One JPEG frame.

    Attributes:
        timestamp_s: The requested time (where the sampling rule put it), in seconds from the start.
        pts_s: Presentation time of the decoded frame actually on screen then (``<= timestamp_s``).
        jpeg: The encoded image.
        width: Image width after resizing, px.
        height: Image height after resizing, px.
    """

    timestamp_s: float
    pts_s: float
    jpeg: bytes
    width: int
    height: int

    def data_url(self) -> str:
        """The frame as a ``data:image/jpeg;base64,...`` URL (OpenAI image content part)."""
        return "data:image/jpeg;base64," + base64.b64encode(self.jpeg).decode("ascii")


@dataclass(frozen=True)
class FrameSet:
    """The frames of one sampling request.

    A partly decodable video still yields the frames that could be decoded; ``failed_timestamps``
    names the rest and ``degraded`` is then true, so a wrong answer can be blamed on the input
    instead of the agent's skills.

    Attributes:
        video: The video file.
        duration_s: The video's duration.
        requested_s: Every requested timestamp, in request order.
        frames: The frames obtained, in request order.
        failed_timestamps: Requested timestamps whose frame could not be decoded.
        from_cache: How many of ``frames`` came from the frame cache.
        window: The stretch of the file sampled (None: the whole video). With a window,
            ``duration_s`` and every timestamp are on its timeline (0 is its start).
    """

    video: Path
    duration_s: float
    requested_s: tuple[float, ...]
    frames: tuple[Frame, ...]
    failed_timestamps: tuple[float, ...] = ()
    from_cache: int = 0
    window: Window | None = None

    @property
    def degraded(self) -> bool:
        """True when some requested frame could not be decoded."""
        return bool(self.failed_timestamps)

    @property
    def timestamps(self) -> tuple[float, ...]:
        """The timestamps of the frames obtained."""
        return tuple(frame.timestamp_s for frame in self.frames)
