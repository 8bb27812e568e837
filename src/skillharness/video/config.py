"""The frame-sampling settings (part of the ``agent`` config section)."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from skillharness.util.model import StrictModel


class FramesConfig(StrictModel):
    """How frames are decoded, resized, encoded and cached."""

    longest_side: int = Field(448, ge=32, le=4096, description="Resize so the longest side is this many px.")
    jpeg_quality: int = Field(85, ge=10, le=100, description="JPEG quality of frames sent to the model.")
    cache_dir: Path | None = Field(
        None, description="On-disk frame cache; default ~/.cache/skillharness/frames."
    )
    cache_enabled: bool = Field(
        True, description="Cache decoded JPEG frames on disk (keyed by file identity)."
    )
