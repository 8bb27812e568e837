"""What each prompt template is for: its role (hence its JSON schema) and the variables it gets.

The training loop renders a template with exactly the variables its :class:`TemplateSpec`
declares. Structured values are the small frozen views below (text only: prompts never carry
images). Every spec has sample values so the preflight can render every template before a run
spends anything.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from skillharness.llm.roles import TOOL_GET_FRAMES, TOOL_PARAMETERS, Role
from skillharness.skills.markers import APPENDIX_MARKER, MOMENTUM_MARKER

__all__ = [
    "TEMPLATE_SPECS",
    "CaseView",
    "EditSetView",
    "SpanView",
    "TemplateSpec",
]


@dataclass(frozen=True)
class CaseView:
    """One wrongly answered question as a prompt shows it (text only, no frames)."""

    question_id: str
    task_type: str
    question: str
    options: tuple[str, ...]  # verbatim, lettered: ("A. ...", "B. ...")
    correct_answer: str
    agent_answer: str | None  # None: the agent submitted no valid letter
    duration_s: float
    trace_summary: str  # one line per model turn / tool call, as diagnosis summarises the trace
    judge_reason: str = ""  # the C3 judge's reason, once diagnosed


@dataclass(frozen=True)
class EditSetView:
    """An edit set as a prompt shows it: a rank candidate, a rejected or an accepted edit."""

    rationale: str
    edits_json: str  # the edit set exactly as proposed (JSON text)
    outcome: str = ""  # why it was rejected (gate reason and a short detail), when it was
    # A rejected edit's standing: "harmful" (the gate saw harm), "unproven" (too little evidence
    # either way) or "invalid" (the patcher refused it); "" for an edit that was not rejected.
    standing: str = ""
    evidence: str = ""  # the counts a gate verdict rests on ("3 wins, 9 losses in 20 ..."), when drawn


@dataclass(frozen=True)
class SpanView:
    """One stretch of the video the agent inspected with a tool."""

    tool: str
    start_s: float
    end_s: float
    detail: str  # e.g. "8 frames", "3 subtitle lines", "failed: frames unavailable"


@dataclass(frozen=True)
class TemplateSpec:
    """A template's contract: which role answers it and which variables it is rendered with."""

    name: str
    role: Role
    purpose: str
    variables: Mapping[str, str]  # variable name → what the training loop passes
    sample: Callable[[], dict[str, Any]]  # values that render it (for the preflight and tests)

    def __post_init__(self) -> None:
        object.__setattr__(self, "variables", MappingProxyType(dict(self.variables)))


# --- sample values -------------------------------------------------------------------------
_SAMPLE_SKILL = (
    "# OCR Problems\n\nQuestions about text shown in the video.\n\n"
    "- Find the frames where the text is readable before answering.\n"
    f"{MOMENTUM_MARKER}\n- Keep in mind: zoom in on signs.\n{APPENDIX_MARKER}\n"
    "## Answer format (fixed)\n\n- Call `submit_answer` with one letter.\n"
)
_SAMPLE_SYSTEM = "You are a careful video analyst answering multiple-choice questions about one video.\n"
_SAMPLE_TOOLS = {
    TOOL_GET_FRAMES: "Return `count` frames between `start_s` and `end_s`.",
    "get_subtitles": "Return the subtitle lines between `start_s` and `end_s`.",
    "submit_answer": "Submit one option letter.",
}


def _case(judge_reason: str = "The skill does not say to read text at several moments.") -> CaseView:
    return CaseView(
        question_id="001-1",
        task_type="OCR Problems",
        question="What is written on the red sign?",
        options=("A. Exit", "B. Open", "C. Closed", "D. Sale"),
        correct_answer="C",
        agent_answer="B",
        duration_s=95.0,
        trace_summary="1. get_frames(40.0, 50.0, 4) -> 4 frames\n2. submit_answer(B)",
        judge_reason=judge_reason,
    )


def _edit_set(outcome: str = "", standing: str = "", evidence: str = "") -> EditSetView:
    edits = {
        "skill_update_mode": "patch",
        "edits": [
            {"op": "insert_after", "anchor": "before answering.", "text": "\n- Read every sign twice."}
        ],
        "body": None,
        "rationale": "Signs were misread.",
    }
    return EditSetView(
        rationale="Signs were misread.",
        edits_json=json.dumps(edits),
        outcome=outcome,
        standing=standing,
        evidence=evidence,
    )


def _evolve_sample(document: str) -> dict[str, Any]:
    return {
        "document": document,
        "cases": [_case()],
        "rejected": [
            _edit_set(
                "reject_evidence: worse after 20 observations",
                "harmful",
                "2 wins, 9 losses in 20 paired observations",
            ),
            _edit_set(
                "reject_inertia: the draws ran out",
                "unproven",
                "5 wins, 3 losses in 24 paired observations",
            ),
            _edit_set("reject_invalid: anchor_absent: edit 0: no such text", "invalid"),
        ],
        "under_test": [_edit_set("", "", "")],
        "skill_update_mode": "patch",
        "max_edits": 4,
        "max_body_chars": 8000,
    }


def _span() -> SpanView:
    return SpanView(tool=TOOL_GET_FRAMES, start_s=40.0, end_s=50.0, detail="4 frames")


_EVOLVE_VARS = {
    "document": "The current text of the target (a skill document is shown whole, all regions).",
    "cases": "list[CaseView]: the case pack of this target (defects only).",
    "rejected": "list[EditSetView]: earlier rejected edit sets of this target, oldest first; each one's "
    "standing says whether it was shown harmful, is unproven or was refused by the patcher.",
    "under_test": "list[EditSetView]: this target's edit sets whose tests are open now (as the step "
    "began); a new proposal is tested together with the strongest of them (train.gate.merge_open).",
    "skill_update_mode": '"patch" or "rewrite" (train.skill_update_mode).',
    "max_edits": "int: most edits in one patch set (EditLimits.max_edits).",
    "max_body_chars": "int: longest body an edit may produce (EditLimits.max_body_chars).",
}
_JUDGE_VARS = {
    "case": "CaseView: the wrongly answered question and its trace summary.",
    "document": "The skill document of the case's task type (whole).",
    "system_prompt": "The agent's system prompt.",
    "tools": "dict[str, str]: tool name → the description the agent saw.",
}

_SPECS = (
    TemplateSpec(
        name="judge",
        role=Role.JUDGE,
        purpose="Diagnosis C3: is a wrong answer a defect of the instructions or a lapse?",
        variables=_JUDGE_VARS,
        sample=lambda: {
            "case": _case(""),
            "document": _SAMPLE_SKILL,
            "system_prompt": _SAMPLE_SYSTEM,
            "tools": _SAMPLE_TOOLS,
        },
    ),
    TemplateSpec(
        name="span_eval_user",
        role=Role.JUDGE,
        purpose="Diagnosis C3 by the stretches of video the agent inspected: did the text send it astray?",
        variables={
            **_JUDGE_VARS,
            "spans": "list[SpanView]: every tool call that inspected the video, in order.",
        },
        sample=lambda: {
            "case": _case(""),
            "spans": [_span()],
            "document": _SAMPLE_SKILL,
            "system_prompt": _SAMPLE_SYSTEM,
            "tools": _SAMPLE_TOOLS,
        },
    ),
    TemplateSpec(
        name="evolve_skill",
        role=Role.EVOLVE,
        purpose="Propose an edit set for the body of one task type's skill document.",
        variables={"task_type": "The task type the skill document is for.", **_EVOLVE_VARS},
        sample=lambda: {"task_type": "OCR Problems", **_evolve_sample(_SAMPLE_SKILL)},
    ),
    TemplateSpec(
        name="evolve_system",
        role=Role.EVOLVE,
        purpose="Propose an edit set for the system prompt.",
        variables=_EVOLVE_VARS,
        sample=lambda: _evolve_sample(_SAMPLE_SYSTEM),
    ),
    TemplateSpec(
        name="evolve_tool",
        role=Role.EVOLVE,
        purpose="Propose an edit set for one tool's description.",
        variables={
            "tool_name": "The tool whose description is edited.",
            "tool_parameters": "The tool's fixed JSON parameter schema (JSON text).",
            **_EVOLVE_VARS,
        },
        sample=lambda: {
            "tool_name": TOOL_GET_FRAMES,
            "tool_parameters": json.dumps(TOOL_PARAMETERS[TOOL_GET_FRAMES]),
            **_evolve_sample(_SAMPLE_TOOLS[TOOL_GET_FRAMES]),
        },
    ),
    TemplateSpec(
        name="evolve_rank",
        role=Role.RANK,
        purpose="Pick the one candidate edit set (0-based) worth spending validation on, or none.",
        variables={
            "target": 'The target label ("skill:ocr_problems", "system", "tools:get_frames").',
            "document": "The current text of the target.",
            "cases": "list[CaseView]: the case pack the candidates were written for.",
            "candidates": "list[EditSetView]: the candidates, in index order.",
            "may_decline": "bool: the reply may say no candidate is worth testing "
            "(train.evolve.rank_may_decline).",
        },
        sample=lambda: {
            "target": "skill:ocr_problems",
            "document": _SAMPLE_SKILL,
            "cases": [_case()],
            "candidates": [_edit_set(), _edit_set()],
            "may_decline": True,
        },
    ),
    TemplateSpec(
        name="slow_momentum",
        role=Role.MOMENTUM,
        purpose="Epoch end: distil this epoch's accepted edits of one skill into momentum guidance.",
        variables={
            "task_type": "The task type the skill document is for.",
            "document": "The skill document as it stands at the epoch's end (whole).",
            "accepted": "list[EditSetView]: the edit sets accepted for this skill this epoch.",
            "epoch": "int: the epoch that just ended (1-based).",
            "max_chars": "int: longest guidance kept (longer is cut).",
        },
        sample=lambda: {
            "task_type": "OCR Problems",
            "document": _SAMPLE_SKILL,
            "accepted": [_edit_set()],
            "epoch": 1,
            "max_chars": 2000,
        },
    ),
    TemplateSpec(
        name="consolidate_system",
        role=Role.CONSOLIDATE,
        purpose="Compact a system prompt that grew over its budget, keeping every instruction.",
        variables={
            "document": "The current system prompt.",
            "max_chars": "int: the system prompt's character budget.",
        },
        sample=lambda: {"document": _SAMPLE_SYSTEM * 3, "max_chars": 120},
    ),
)

TEMPLATE_SPECS: Mapping[str, TemplateSpec] = MappingProxyType({spec.name: spec for spec in _SPECS})
