"""What an evolve prompt is rendered from: the target's text, the pack's cases, earlier rejections.

One home for the variables of ``evolve_skill`` / ``evolve_system`` / ``evolve_tool`` (see
:data:`~skillharness.train.roles.prompt_specs.TEMPLATE_SPECS`), shared by the evolution step and its
dry run, so a dry run shows exactly the prompt a real step would send.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from typing import Any

from skillharness.data import slugify
from skillharness.errors import SkillharnessError
from skillharness.llm.roles import TOOL_PARAMETERS
from skillharness.skills import Bundle, EditLimits, EditTarget
from skillharness.train.diagnose.diagnoser import case_view
from skillharness.train.roles.prompt_specs import CaseView, EditSetView
from skillharness.train.roles.templates import RenderedPrompt
from skillharness.train.state.context import TrainContext
from skillharness.train.state.records import CasePack, Diagnosis, RejectedEdit

__all__ = [
    "case_views",
    "edit_limits",
    "editable_text",
    "evolve_template",
    "evolve_variables",
    "render_evolve_prompts",
    "target_text",
    "task_type_name",
]

_TEMPLATES = {"skill": "evolve_skill", "system": "evolve_system", "tools": "evolve_tool"}
_NO_TRACE = "(no trace summary)"


def evolve_template(target: EditTarget) -> str:
    """The evolve template of ``target``'s kind."""
    return _TEMPLATES[target.kind]


def edit_limits(ctx: TrainContext) -> EditLimits:
    """The caps every proposed edit set is applied under (``train.evolve``)."""
    return EditLimits(max_edits=ctx.config.evolve.max_edits, max_body_chars=ctx.config.evolve.max_body_chars)


def target_text(bundle: Bundle, target: EditTarget) -> str:
    """The whole current text of ``target`` (see :meth:`Bundle.text_of`)."""
    return bundle.text_of(target)


def editable_text(bundle: Bundle, target: EditTarget) -> str:
    """The part of ``target`` an edit may change: a skill's body, else the whole text."""
    if target.kind == "skill":
        return bundle.skill(target.name or "").body
    return target_text(bundle, target)


def task_type_name(pack: CasePack) -> str:
    """The human task type name of a skill pack (the target only holds its slug)."""
    for diagnosis in pack.cases:
        if slugify(diagnosis.case.question.task_type) == pack.target.name:
            return diagnosis.case.question.task_type
    return pack.target.name or ""


def _pack_case_view(diagnosis: Diagnosis, duration_s: float) -> CaseView:
    """A diagnosed case as a prompt shows it (the judge's view, with its reason and the duration)."""
    view = case_view(
        diagnosis.case, trace_summary=diagnosis.trace_summary or _NO_TRACE, judge_reason=diagnosis.reason
    )
    return dataclasses.replace(view, duration_s=duration_s)


async def case_views(ctx: TrainContext, pack: CasePack) -> list[CaseView]:
    """The pack's cases as prompt views, each with its video's duration (0 when it cannot be read)."""
    views = []
    for diagnosis in pack.cases:
        try:
            duration = await ctx.session.sources.duration_s(diagnosis.case.question)
        except SkillharnessError:  # the duration is a hint to the model; its absence is no reason to stop
            duration = 0.0
        views.append(_pack_case_view(diagnosis, duration))
    return views


async def evolve_variables(
    ctx: TrainContext,
    bundle: Bundle,
    pack: CasePack,
    rejected: Sequence[RejectedEdit],
    under_test: Sequence[EditSetView] = (),
) -> dict[str, Any]:
    """Exactly the variables the target's evolve template declares."""
    limits = edit_limits(ctx)
    memory = ctx.config.evolve.rejected_memory
    variables: dict[str, Any] = {
        "document": target_text(bundle, pack.target),
        "cases": await case_views(ctx, pack),
        "rejected": [r.view() for r in list(rejected)[-memory:]] if memory else [],
        "under_test": list(under_test),
        "skill_update_mode": ctx.config.skill_update_mode,
        "max_edits": limits.max_edits,
        "max_body_chars": limits.max_body_chars,
    }
    if pack.target.kind == "skill":
        variables["task_type"] = task_type_name(pack)
    elif pack.target.kind == "tools":
        name = pack.target.name or ""
        variables["tool_name"] = name
        variables["tool_parameters"] = json.dumps(TOOL_PARAMETERS.get(name, {}), sort_keys=True)
    return variables


async def render_evolve_prompts(
    ctx: TrainContext,
    bundle: Bundle,
    packs: Sequence[CasePack],
    rejected_by_target: Mapping[str, Sequence[RejectedEdit]] | None = None,
) -> list[RenderedPrompt]:
    """The evolve prompts a step would send, one per pack, without calling any model (``--dry-run``).

    Each prompt is sent ``train.evolve.candidates`` times (sample_idx 0..n-1) when the evolve role
    samples, once at temperature 0; the rank prompt depends on the candidates, so a dry run cannot
    show it.
    """
    rejected_by_target = rejected_by_target or {}
    prompts = []
    for pack in packs:
        rejected = rejected_by_target.get(pack.target.label(), ())
        variables = await evolve_variables(ctx, bundle, pack, rejected)
        prompts.append(ctx.caller.render(evolve_template(pack.target), variables))
    return prompts
