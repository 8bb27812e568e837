"""Asking a non-agent role: render its template, send it with the role's model and sampling.

One function for every role (judge, evolve, rank, momentum, consolidate), so per-role models,
sampling and accounting live in one place, and so does the rule that a failed call is a value
(``None`` with the error), never an exception that aborts a step.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from skillharness.errors import LLMError
from skillharness.llm.roles import Role
from skillharness.llm.types import ChatModel, ChatRequest, SamplingParams
from skillharness.train.config import DEFAULT_ROLE_TEMPERATURE, RoleSettings, TrainConfig
from skillharness.train.roles.templates import PromptTemplates, RenderedPrompt
from skillharness.train.state.draws import draw_temperature

__all__ = [
    "RoleAnswer",
    "RoleCaller",
    "distinct_samples",
    "evolve_calls",
    "role_sampling",
    "run_models",
]


@dataclass(frozen=True)
class RoleAnswer:
    """The text a role answered, or the error that stopped it (``text`` is None then)."""

    prompt: RenderedPrompt
    text: str | None
    error: str | None = None


@dataclass(frozen=True)
class RoleCaller:
    """Renders and sends role prompts with each role's own model and sampling."""

    model: ChatModel
    templates: PromptTemplates
    default_model: str
    roles: Mapping[str, RoleSettings]

    def request(self, prompt: RenderedPrompt, *, sample_idx: int = 0) -> ChatRequest:
        """The chat request for ``prompt`` (its role's model, sampling and named schema)."""
        return ChatRequest(
            model=self.model_for(prompt.role),
            messages=prompt.messages(),
            role=prompt.role,
            response_format=prompt.response_format(),
            sampling=self.sampling_for(prompt.role),
            sample_idx=sample_idx,
        )

    def render(self, template: str, variables: Mapping[str, Any]) -> RenderedPrompt:
        return self.templates.render(template, variables)

    async def ask(self, template: str, variables: Mapping[str, Any], *, sample_idx: int = 0) -> RoleAnswer:
        """Render ``template`` and ask its role; a failed call is returned, not raised."""
        prompt = self.render(template, variables)
        try:
            response = await self.model.complete(self.request(prompt, sample_idx=sample_idx))
        except LLMError as exc:
            return RoleAnswer(prompt, None, f"{type(exc).__name__}: {exc}"[:500])
        return RoleAnswer(prompt, response.content)

    def model_for(self, role: Role) -> str:
        settings = self.roles.get(role.value)
        return (settings.model if settings else None) or self.default_model

    def sampling_for(self, role: Role) -> SamplingParams:
        """The role's sampling parameters (temperature 0 unless the role's settings say otherwise)."""
        return role_sampling(self.roles, role)


def run_models(default_model: str, roles: Mapping[str, RoleSettings]) -> dict[str, str]:
    """Every model name a training run sends, each with the setting that names it (the agent's
    ``llm.model`` first), so a start-up check can say which setting to change."""
    models = {default_model: "llm.model"}
    for role, settings in sorted(roles.items()):
        if settings.model is not None:
            models.setdefault(settings.model, f"train.roles.{role}.model")
    return models


def role_sampling(roles: Mapping[str, RoleSettings], role: Role) -> SamplingParams:
    """The sampling parameters ``role`` is sent with under ``train.roles`` (an unset temperature is
    ``DEFAULT_ROLE_TEMPERATURE``'s, else 0)."""
    settings = roles.get(role.value, RoleSettings())
    return SamplingParams(
        temperature=settings.temperature
        if settings.temperature is not None
        else DEFAULT_ROLE_TEMPERATURE.get(role.value, 0.0),
        top_p=settings.top_p,
        max_tokens=settings.max_tokens,
        seed=settings.seed,
    )


def distinct_samples(wanted: int, sampling: SamplingParams) -> int:
    """How many of ``wanted`` calls of one prompt can answer differently: all when sampling, else one.

    At temperature 0, or with a fixed seed, a server answers the same prompt alike (it never sees
    the sample index), so every call past the first would pay for a copy.
    """
    return wanted if draw_temperature(sampling) > 0 else 1


def evolve_calls(train: TrainConfig) -> int:
    """Evolve calls per target under ``train``: ``train.evolve.candidates`` when the role samples, else 1."""
    return distinct_samples(train.evolve.candidates, role_sampling(train.roles, Role.EVOLVE))
