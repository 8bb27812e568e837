"""The ``agent`` config section."""

from __future__ import annotations

from pydantic import Field

from skillharness.llm.types import SamplingParams
from skillharness.util.model import StrictModel
from skillharness.video.config import FramesConfig


class AgentConfig(StrictModel):
    """How the agent sees a question and how much it may spend on it."""

    initial_frames: int = Field(8, ge=0, description="Uniform frames in the first message.")
    max_steps: int = Field(6, ge=1, description="Model turns per question.")
    max_frames: int = Field(32, ge=0, description="Frames per question, first message included.")
    vision: bool = Field(True, description="false: send no images (subtitle-and-text baseline).")
    subtitles: bool = Field(True, description="Show the subtitle lines at the sampled frame times.")
    samples: int = Field(1, ge=1, description="Independent samples per question.")
    concurrency: int = Field(24, ge=1, description="Questions in flight.")
    sampling: SamplingParams = Field(default_factory=lambda: SamplingParams(temperature=0.0))
    frames: FramesConfig = Field(default_factory=FramesConfig)
