"""The deterministic steps of the diagnosis waterfall (SPEC 4.3.2), pure functions of one case.

C1 reads the prediction, C2 the stored trace; whatever neither settles goes to the C3 judge,
whose reply :func:`judge_finding` turns into a cause and a target. Each step returns a
:class:`Finding` or None ("not mine, next step").

Targets, one rule each:

- ``parse_error`` (C1, *format*): the agent called ``submit_answer`` with something that is not one
  option letter → that tool's description; it never called ``submit_answer`` (a text reply) → the
  system prompt, which says how to answer at all.
- tool misuse (C2, *tool*): the first refused call (arguments outside the video or malformed, a
  frame request over budget, an unknown tool) or the first call repeated with the same arguments →
  that tool's description (an unknown tool → the system prompt).
- step budget exhausted (C2, *tool*): the tool called most often (the first of a tie) → its
  description; no tool call at all → the system prompt.
- judge ``skill`` → the task type's skill body; ``system`` → the system prompt; ``tools`` → the tool
  the trace points at (as for a step-budget case), else the system prompt.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from skillharness.agent.records import Prediction, PredictionStatus, StepRole, TraceStep
from skillharness.llm.roles import TOOL_GET_SUBTITLES, TOOL_SUBMIT_ANSWER
from skillharness.skills import EditTarget
from skillharness.train.diagnose.trace_summary import call_signature
from skillharness.train.roles.replies import JudgeReply, ReplyRefusal
from skillharness.train.state.records import Cause

__all__ = [
    "STEP_BUDGET_EXHAUSTED",
    "Finding",
    "c1_from_prediction",
    "c2_from_trace",
    "judge_finding",
    "tool_in_focus",
]

STEP_BUDGET_EXHAUSTED = "StepBudgetExhausted"  # the agent loop's error class for "no answer in time"
# A tool error raised by our own code (frames, subtitle files) reads "SomethingError: ..."; the
# refusals of the model's own arguments are plain sentences (see skillharness.agent.tools).
_HARNESS_ERROR = re.compile(r"^[A-Z][A-Za-z0-9]*(Error|Exception): ")


@dataclass(frozen=True)
class Finding:
    """What one waterfall step made of a case."""

    cause: Cause
    target: EditTarget | None
    reason: str


def _tool_steps(trace: Sequence[TraceStep]) -> list[TraceStep]:
    return [s for s in trace if s.role is StepRole.TOOL and s.tool_name]


def c1_from_prediction(prediction: Prediction, trace: Sequence[TraceStep]) -> Finding | None:
    """C1: infra errors are excluded; parse errors are format evidence (None: not settled here)."""
    if prediction.status is PredictionStatus.INFRA_ERROR:
        detail = f"{prediction.error_class}: {prediction.error_message}"[:300]
        return Finding(Cause.INFRA, None, f"infrastructure error, asked again next rollout ({detail})")
    if (
        prediction.status is not PredictionStatus.PARSE_ERROR
        or prediction.error_class == STEP_BUDGET_EXHAUSTED
    ):
        return None
    message = (prediction.error_message or "unparseable answer")[:200]
    if any(s.tool_name == TOOL_SUBMIT_ANSWER for s in _tool_steps(trace)):
        return Finding(
            Cause.FORMAT,
            EditTarget.tool(TOOL_SUBMIT_ANSWER),
            f"submit_answer got no single letter: {message}",
        )
    return Finding(Cause.FORMAT, EditTarget.system(), f"answered without submit_answer: {message}")


def _degraded(prediction: Prediction, trace: Sequence[TraceStep]) -> str | None:
    if prediction.degraded or any(s.degraded for s in trace):
        return "frames failed to decode or came back degraded"
    for step in _tool_steps(trace):
        if step.tool_name == TOOL_GET_SUBTITLES and step.error and _HARNESS_ERROR.match(step.error):
            return f"the subtitles could not be read: {step.error[:200]}"
    return None


def tool_in_focus(trace: Sequence[TraceStep]) -> str | None:
    """The tool called most often (not submit_answer; the first called wins a tie), or None."""
    names = [s.tool_name for s in _tool_steps(trace) if s.tool_name != TOOL_SUBMIT_ANSWER]
    if not names:
        return None
    counts = Counter(names)
    return max(dict.fromkeys(names), key=lambda name: counts[name])


def _tool_target(name: str | None, tools: Collection[str]) -> EditTarget:
    return EditTarget.tool(name) if name is not None and name in tools else EditTarget.system()


def _misuse(trace: Sequence[TraceStep], tools: Collection[str]) -> Finding | None:
    seen: set[str] = set()
    for step in _tool_steps(trace):
        if step.tool_name == TOOL_SUBMIT_ANSWER:
            continue
        if step.error:
            return Finding(
                Cause.TOOL,
                _tool_target(step.tool_name, tools),
                f"{step.tool_name} refused: {step.error[:200]}",
            )
        signature = call_signature(step)
        if signature in seen:
            return Finding(
                Cause.TOOL, _tool_target(step.tool_name, tools), f"the same call repeated: {signature[:200]}"
            )
        seen.add(signature)
    return None


def c2_from_trace(
    prediction: Prediction, trace: Sequence[TraceStep], tools: Collection[str]
) -> Finding | None:
    """C2: degraded evidence is excluded; tool misuse and an exhausted step budget are tool evidence.

    ``tools`` are the bundle's tool names (a call to any other tool targets the system prompt).
    """
    degraded = _degraded(prediction, trace)
    if degraded is not None:
        return Finding(Cause.DEGRADED, None, degraded)
    if prediction.error_class == STEP_BUDGET_EXHAUSTED:
        focus = tool_in_focus(trace)
        return Finding(
            Cause.TOOL,
            _tool_target(focus, tools),
            f"step budget exhausted without an answer (mostly {focus})",
        )
    return _misuse(trace, tools)


def judge_finding(
    reply: JudgeReply | ReplyRefusal | None,
    *,
    error: str | None,
    task_type: str,
    trace: Sequence[TraceStep],
    tools: Collection[str],
) -> Finding:
    """C3: the judge's parsed reply as a finding. A failed call or an unusable reply is JUDGE_FAILED."""
    if reply is None or isinstance(reply, ReplyRefusal):
        why = error if reply is None else f"unusable reply: {reply.detail}"
        return Finding(Cause.JUDGE_FAILED, None, f"judge failed ({(why or 'no reply')[:300]}); retried later")
    if reply.verdict != "defect":
        return Finding(Cause(reply.verdict), None, reply.reason)
    if reply.target == "skill":
        target = EditTarget.skill(task_type)
    elif reply.target == "system":
        target = EditTarget.system()
    else:
        target = _tool_target(tool_in_focus(trace), tools)
    return Finding(Cause.DEFECT, target, reply.reason)
