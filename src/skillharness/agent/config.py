"""The ``agent`` config section."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field, model_validator

from skillharness.agent.protocols.slots import BundleSlot
from skillharness.agent.protocols.turn import ProtocolName
from skillharness.llm.types import PER_DRAW, SamplingParams
from skillharness.util.model import StrictModel
from skillharness.video.config import FramesConfig


class AgentConfig(StrictModel):
    """How the agent sees a question and how much it may spend on it."""

    bundle: Path | None = Field(
        None, description="Skill bundle folder (or a workspace: its current version) the agent runs with."
    )
    initial_frames: int = Field(8, ge=0, description="Uniform frames in the first message.")
    max_steps: int = Field(6, ge=1, description="Model turns per question; the last one may only answer.")
    max_frames: int = Field(32, ge=0, description="Frames per question, first message included.")
    max_frames_per_call: int = Field(16, ge=1, description="Most frames one get_frames call may return.")
    vision: bool = Field(True, description="false: send no images (subtitle-and-text baseline).")
    subtitles: bool = Field(True, description="Show the subtitle lines at the sampled frame times.")
    max_subtitle_chars: int = Field(
        4000, ge=100, description="Subtitle text shown per message or tool result; longer is cut."
    )
    trace_chars: int = Field(2000, ge=100, description="Characters of each message kept in the trace.")
    samples: int = Field(1, ge=1, description="Independent samples per question.")
    concurrency: int = Field(
        24,
        ge=1,
        description="Conversations in progress (so model calls in flight); a few more questions wait for "
        "their prediction to be committed meanwhile.",
    )
    sampling: SamplingParams = Field(
        default_factory=lambda: SamplingParams(temperature=0.0),
        description="Sampling parameters of every agent call (all enter the cache key). seed: an int "
        "is sent with every call; 'per_draw' sends each draw its own seed, derived from (question, sample "
        "index, seed_salt), so both arms of a paired gate draw share it (docs/agent.md). At a temperature "
        "above 0 an unset seed is per_draw; seed: null samples both arms independently.",
    )
    seed_salt: str | None = Field(
        None,
        description="Run-level salt of the per_draw seeds: another salt, another set of seeds. Unset: "
        "the run's id, so two runs draw different seeds; runs given one salt give a draw one seed (pin "
        "it to pair a baseline run with a training run).",
    )
    frames: FramesConfig = Field(
        default_factory=FramesConfig, description="Frame decoding, resizing, JPEG quality and cache."
    )
    protocol: ProtocolName = Field(
        ProtocolName.SKILLHARNESS,
        description="skillharness (our tool-using agent) or a reference evaluation's single request: "
        "lmms_eval | vlmevalkit | official (docs/protocols.md).",
    )
    protocol_frames: int | None = Field(
        None, ge=1, description="Frames a reference protocol sends; unset: that reference's default."
    )
    protocol_bundle_slot: BundleSlot = Field(
        BundleSlot.NONE,
        description="Under a reference protocol, where the bundle's system prompt and skill go: 'none' "
        "sends no bundle text (the upstream request, byte for byte); 'auto' the place that protocol "
        "lets its user put instructions (lmms-eval: videomme's post_prompt; VLMEvalKit: its system "
        "prompt; official: none, refused); 'system' a system message under any protocol (what "
        "training evolves). docs/protocols.md.",
    )

    @model_validator(mode="before")
    @classmethod
    def _per_draw_when_sampling(cls, data: Any) -> Any:
        """At a temperature above 0 an unset seed is one seed per draw: coupled arms by default."""
        if not isinstance(data, dict):
            return data
        sampling = data.get("sampling")
        if isinstance(sampling, SamplingParams):
            given, temperature = "seed" in sampling.model_fields_set, sampling.temperature
            if not given and temperature:
                data = {**data, "sampling": sampling.model_copy(update={"seed": PER_DRAW})}
        elif isinstance(sampling, dict) and "seed" not in sampling:
            temperature = sampling.get("temperature")
            if isinstance(temperature, int | float) and temperature > 0:
                data = {**data, "sampling": {**sampling, "seed": PER_DRAW}}
        return data

    def for_run(self, run_id: str) -> AgentConfig:
        """This config with its seed salt resolved for run ``run_id``: the run's id when unset and the
        seeds are per draw; "" when no per-draw seed is sent (the salt then changes nothing)."""
        if self.seed_salt is not None:
            return self
        return self.model_copy(update={"seed_salt": run_id if self.sampling.per_draw else ""})

    @model_validator(mode="after")
    def _initial_within_budget(self) -> AgentConfig:
        if self.vision and self.initial_frames > self.max_frames:
            raise ValueError(f"initial_frames ({self.initial_frames}) exceeds max_frames ({self.max_frames})")
        return self
