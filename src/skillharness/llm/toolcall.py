"""Opt-in recovery of a tool call that a model wrote as bare JSON in ``content``.

Small models behind llama.cpp often answer ``{"name": "submit_answer", "arguments": {...}}`` as
text instead of a ``tool_calls`` delta. This extractor accepts exactly one call, only for a tool
the request offered, with object arguments; anything ambiguous is left alone (returns None).
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from typing import Any

from skillharness.llm.types import ChatResponse, ToolCall

__all__ = ["apply_content_tool_call", "extract_tool_call"]

_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)
_TAG = re.compile(r"^<tool_call>\s*(.*?)\s*</tool_call>$", re.DOTALL)


def _strip_wrappers(text: str) -> str:
    text = text.strip()
    for pattern in (_FENCE, _TAG):
        match = pattern.match(text)
        if match:
            text = match.group(1).strip()
    return text


def _unwrap(obj: Any) -> Any:
    # Accept the OpenAI shapes a model may imitate: {"tool_calls": [x]}, [x], {"function": x}.
    if isinstance(obj, dict) and isinstance(obj.get("tool_calls"), list) and len(obj) == 1:
        obj = obj["tool_calls"]
    if isinstance(obj, list):
        obj = obj[0] if len(obj) == 1 else None
    if isinstance(obj, dict) and isinstance(obj.get("function"), dict):
        obj = obj["function"]
    return obj


def extract_tool_call(content: str | None, allowed_names: Collection[str]) -> ToolCall | None:
    """One tool call parsed from ``content``, or None when the text is not exactly one call."""
    if not content:
        return None
    try:
        obj = _unwrap(json.loads(_strip_wrappers(content)))
    except ValueError:
        return None
    if not isinstance(obj, dict):
        return None
    name = obj.get("name")
    args = obj.get("arguments", obj.get("parameters"))
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except ValueError:
            return None
    if not isinstance(name, str) or name not in allowed_names or not isinstance(args, dict):
        return None
    extra = set(obj) - {"name", "arguments", "parameters", "id", "type"}
    if extra:
        return None
    return ToolCall(id=str(obj.get("id") or "call_content_0"), name=name, arguments=json.dumps(args))


def apply_content_tool_call(response: ChatResponse, tools: Collection[dict[str, Any]] | None) -> ChatResponse:
    """``response`` with a content-borne tool call moved into ``tool_calls`` (else unchanged)."""
    if response.tool_calls or not tools:
        return response
    names = {(tool.get("function") or {}).get("name") for tool in tools}
    call = extract_tool_call(response.content, {n for n in names if isinstance(n, str)})
    if call is None:
        return response
    return response.model_copy(update={"content": None, "tool_calls": (call,), "finish_reason": "tool_calls"})
