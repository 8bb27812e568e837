"""The agent's tools: their specs (as sent to the model) and their execution under budgets.

Names and parameter schemas are fixed by :mod:`skillharness.llm.roles`; the descriptions come from
the bundle, because they evolve. Executing a call never raises for anything the model did wrong:
bad JSON, a missing or mistyped argument, a range outside the video or an exhausted budget become
a tool-result message that tells the model what happened. A frame or subtitle source that fails
with one of our errors is reported the same way and marks the step *degraded*; anything else is a
bug and reaches the question's error boundary.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from skillharness.agent.config import AgentConfig
from skillharness.agent.ports import BundleView, FrameSource, SubtitleSource
from skillharness.agent.prompt import cap_text, format_seconds, frame_parts
from skillharness.data.questions import Question
from skillharness.errors import SkillharnessError
from skillharness.llm.roles import (
    AGENT_TOOL_NAMES,
    TOOL_GET_FRAMES,
    TOOL_GET_SUBTITLES,
    TOOL_PARAMETERS,
    TOOL_SUBMIT_ANSWER,
)
from skillharness.llm.types import ToolCall

__all__ = ["ToolBox", "ToolOutcome", "available_tools", "tool_specs"]


def available_tools(config: AgentConfig, *, has_subtitles: bool) -> tuple[str, ...]:
    """The tool names offered: no ``get_frames`` without vision, no ``get_subtitles`` without subtitles."""
    offered = {
        TOOL_GET_FRAMES: config.vision,
        TOOL_GET_SUBTITLES: config.subtitles and has_subtitles,
        TOOL_SUBMIT_ANSWER: True,
    }
    return tuple(name for name in AGENT_TOOL_NAMES if offered[name])


def tool_specs(bundle: BundleView, names: tuple[str, ...]) -> tuple[dict[str, Any], ...]:
    """OpenAI ``tools`` entries for ``names``, with the bundle's descriptions."""
    return tuple(
        {
            "type": "function",
            "function": {
                "name": name,
                "description": bundle.tools.get(name, ""),
                "parameters": TOOL_PARAMETERS[name],
            },
        }
        for name in names
    )


@dataclass(frozen=True)
class ToolOutcome:
    """What one executed tool call produced, for the conversation and for the trace."""

    call: ToolCall
    text: str
    image_parts: tuple[dict[str, Any], ...] = ()
    frames_shown: tuple[float, ...] = ()
    subtitles_shown: tuple[str, ...] = ()
    degraded: bool = False
    error: str | None = None

    def message(self) -> dict[str, Any]:
        return {"role": "tool", "tool_call_id": self.call.id, "content": self.text}


class _Refused(Exception):
    """The call cannot run as asked; the message is shown to the model."""


class ToolBox:
    """Runs one question's ``get_frames`` / ``get_subtitles`` calls and keeps its frame budget."""

    def __init__(
        self,
        question: Question,
        *,
        config: AgentConfig,
        offered: tuple[str, ...],
        duration_s: float,
        frames: FrameSource,
        subtitles: SubtitleSource | None,
        frames_used: int,
    ) -> None:
        self._question = question
        self._config = config
        self._offered = offered
        self._duration_s = duration_s
        self._frames = frames
        self._subtitles = subtitles
        self.frames_used = frames_used

    async def run(self, call: ToolCall) -> ToolOutcome:
        """Execute ``call``; every problem the model caused becomes an error message, not an exception."""
        try:
            if call.name not in self._offered or call.name == TOOL_SUBMIT_ANSWER:
                raise _Refused(f"unknown or unavailable tool {call.name!r}; available: {list(self._offered)}")
            args = _arguments(call.arguments)
            if call.name == TOOL_GET_FRAMES:
                return await self._get_frames(call, args)
            return await self._get_subtitles(call, args)
        except _Refused as exc:
            return ToolOutcome(call, f"error: {exc}", error=str(exc))
        except SkillharnessError as exc:
            message = f"{type(exc).__name__}: {exc}"
            return ToolOutcome(
                call, f"error: {message}", error=message, degraded=call.name == TOOL_GET_FRAMES
            )

    def _range(self, args: dict[str, Any]) -> tuple[float, float]:
        start = max(0.0, _number(args, "start_s"))
        end = min(self._duration_s, _number(args, "end_s"))
        if not start < end:
            raise _Refused(
                f"empty time range [{format_seconds(start)}, {format_seconds(end)}] "
                f"(the video lasts {format_seconds(self._duration_s)})"
            )
        return start, end

    async def _get_frames(self, call: ToolCall, args: dict[str, Any]) -> ToolOutcome:
        start, end = self._range(args)
        remaining = self._config.max_frames - self.frames_used
        if remaining <= 0:
            raise _Refused(f"frame budget exhausted ({self._config.max_frames} frames used); answer now")
        count = min(_integer(args, "count"), remaining, self._config.max_frames_per_call)
        frame_set = await self._frames.between(self._question, start, end, count)
        self.frames_used += len(frame_set.requested_s)
        times = ", ".join(format_seconds(t) for t in frame_set.timestamps)
        text = f"{len(frame_set.frames)} frames from {format_seconds(start)}-{format_seconds(end)} at {times}"
        error = None
        if frame_set.degraded:
            failed = ", ".join(format_seconds(t) for t in frame_set.failed_timestamps)
            error = f"frames failed to decode at {failed}"
            text += f"; {error}"
        text += (
            f"; they follow in the next message. {self._config.max_frames - self.frames_used} frames left."
        )
        return ToolOutcome(
            call,
            text,
            image_parts=tuple(frame_parts(frame_set.frames)),
            frames_shown=frame_set.timestamps,
            degraded=frame_set.degraded,
            error=error,
        )

    async def _get_subtitles(self, call: ToolCall, args: dict[str, Any]) -> ToolOutcome:
        start, end = self._range(args)
        source = self._subtitles
        if source is None:  # never offered then; checked again for the type checker
            raise _Refused("subtitles are not available in this run")
        lines = await source.lines_between(self._question, start, end)
        body = "\n".join(lines) if lines else "(no subtitles in this range)"
        header = f"Subtitles {format_seconds(start)}-{format_seconds(end)}:\n"
        return ToolOutcome(
            call, header + cap_text(body, self._config.max_subtitle_chars), subtitles_shown=lines
        )


def _arguments(raw: str) -> dict[str, Any]:
    try:
        value = json.loads(raw or "{}")
    except ValueError as exc:  # JSONDecodeError, or an integer too long to convert (no .msg)
        raise _Refused(f"arguments are not valid JSON ({getattr(exc, 'msg', exc)})") from None
    except RecursionError:
        raise _Refused("arguments are nested too deeply") from None
    if not isinstance(value, dict):
        raise _Refused("arguments must be a JSON object")
    return value


def _number(args: dict[str, Any], name: str) -> float:
    value = args.get(name)
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            pass
    what = "a whole number" if name == "count" else "a number of seconds"
    if isinstance(value, int) and not isinstance(value, bool):
        try:
            value = float(value)
        except OverflowError:  # an integer of hundreds of digits
            raise _Refused(f"{name} must be {what}, got an integer far too large") from None
    if not isinstance(value, float) or not math.isfinite(value):
        raise _Refused(f"{name} must be {what}, got {_shown(value)}")
    return value


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _integer(args: dict[str, Any], name: str) -> int:
    value = _number(args, name)
    if value < 1 or value != int(value):
        raise _Refused(f"{name} must be a positive integer, got {args.get(name)!r}")
    return int(value)
