"""A stored trace as text for the judge: one line per step, never an image (SPEC 4.3.2, audit P0-2).

The judge sees what the agent did, not what it saw: the question it was shown, each model turn,
each tool call with its arguments and what came back (or the error). Frames are named by their
timestamps only.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from skillharness.agent.records import StepRole, TraceStep
from skillharness.llm.roles import TOOL_GET_FRAMES, TOOL_SUBMIT_ANSWER
from skillharness.train.roles.prompt_specs import SpanView

__all__ = ["call_signature", "summarize_trace", "trace_spans", "video_duration_s"]

_LINE_CHARS = 200  # one step's line; a judge needs the gist, not the whole subtitle dump
_DURATION = re.compile(r"Video duration:\s*([0-9]+(?:\.[0-9]+)?)\s*s")


def _one_line(text: str, limit: int = _LINE_CHARS) -> str:
    flat = " / ".join(part.strip() for part in text.splitlines() if part.strip())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _arguments(raw: str | None) -> dict[str, object] | None:
    try:
        value = json.loads(raw or "{}")
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def call_signature(step: TraceStep) -> str:
    """``get_frames(start_s=40.0, end_s=50.0, count=4)``: a tool call as one comparable string."""
    args = _arguments(step.tool_arguments)
    if args is None:
        shown = _one_line(step.tool_arguments or "", 80)
    else:
        shown = ", ".join(f"{key}={json.dumps(args[key], sort_keys=True)}" for key in sorted(args))
    return f"{step.tool_name}({shown})"


def _user_line(step: TraceStep) -> str:
    parts = [f"{len(step.frames_shown)} frames", f"{len(step.subtitles_shown)} subtitle lines"]
    duration = _DURATION.search(step.content)
    if duration:
        parts.insert(0, f"video {float(duration.group(1)):.1f}s")
    flag = " [frames degraded]" if step.degraded else ""
    return f"question shown ({', '.join(parts)}){flag}"


def _assistant_line(step: TraceStep) -> str:
    said = _one_line(step.content) if step.content.strip() else "(no text)"
    calls = f" -> calls {step.tool_name}" if step.tool_name else " -> no tool call"
    return f"model: {said}{calls}"


def _tool_line(step: TraceStep) -> str:
    if step.tool_name == TOOL_SUBMIT_ANSWER:
        return f"{call_signature(step)} -> {_one_line(step.content)}"
    result = f"error: {_one_line(step.error)}" if step.error else _one_line(step.content)
    flag = " [degraded]" if step.degraded else ""
    return f"{call_signature(step)} -> {result}{flag}"


def summarize_trace(steps: Sequence[TraceStep]) -> str:
    """One numbered line per step, in order; ``"(no steps were recorded)"`` for an empty trace."""
    if not steps:
        return "(no steps were recorded)"
    lines = []
    for number, step in enumerate(steps, start=1):
        if step.role is StepRole.USER:
            line = _user_line(step)
        elif step.role is StepRole.ASSISTANT:
            line = _assistant_line(step)
        else:
            line = _tool_line(step)
        lines.append(f"{number}. {line}")
    return "\n".join(lines)


def video_duration_s(steps: Sequence[TraceStep]) -> float:
    """The video's length as the first message told the agent (0.0 when it is not in the trace)."""
    for step in steps:
        if step.role is StepRole.USER:
            found = _DURATION.search(step.content)
            if found:
                return float(found.group(1))
    return 0.0


def _number(args: dict[str, object], name: str) -> float:
    value = args.get(name)
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return 0.0


def trace_spans(steps: Sequence[TraceStep]) -> list[SpanView]:
    """Every tool call that inspected the video, in order (the ``span_eval_user`` template's spans)."""
    spans = []
    for step in steps:
        if step.role is not StepRole.TOOL or step.tool_name in (None, TOOL_SUBMIT_ANSWER):
            continue
        args = _arguments(step.tool_arguments) or {}
        if step.error and not step.frames_shown:
            detail = f"failed: {_one_line(step.error, 120)}"
        elif step.tool_name == TOOL_GET_FRAMES:
            detail = f"{len(step.frames_shown)} frames"
        else:
            detail = f"{len(step.subtitles_shown)} subtitle lines"
        spans.append(
            SpanView(
                tool=step.tool_name,
                start_s=_number(args, "start_s"),
                end_s=_number(args, "end_s"),
                detail=detail,
            )
        )
    return spans
