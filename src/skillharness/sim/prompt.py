"""Reading the text out of a chat-completions request the way the simulated roles see it."""

from __future__ import annotations

import json
import re
from typing import Any

from skillharness.llm.roles import (
    DOCUMENT_CLOSE,
    DOCUMENT_OPEN,
    SAMPLE_IDX_KEY,
    UNDER_TEST_CLOSE,
    UNDER_TEST_OPEN,
)
from skillharness.sim.wire import estimate_tokens
from skillharness.skills.markers import MOMENTUM_MARKER

__all__ = [
    "IMAGE_TOKENS",
    "all_text",
    "document_body",
    "draw_index",
    "extract_document",
    "extract_under_test",
    "first_user_text",
    "instruction_text",
    "message_text",
    "prompt_tokens",
    "stated_duration",
    "tool_descriptions",
]

_JSON_BLOCK = re.compile(r"```json\n(.*?)\n```", re.S)
# The agent's first message states the video's length: "Video duration: 123.4s."
_DURATION = re.compile(r"video duration:\s*([0-9]+(?:\.[0-9]+)?)\s*s", re.IGNORECASE)

IMAGE_TOKENS = 256  # prompt tokens charged per image part (order of a small VL model's cost)


def message_text(message: dict[str, Any]) -> str:
    """The text of one message: a string content, or its ``text`` parts joined by newlines."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(part.get("text", ""))
            for part in content
            if isinstance(part, dict) and part.get("type") == "text"
        )
    return ""


def stated_duration(text: str) -> float | None:
    """The video length ``text`` states ("Video duration: 123.4s"), or None."""
    match = _DURATION.search(text)
    return float(match.group(1)) if match else None


def all_text(body: dict[str, Any]) -> str:
    """Every message's text, in order."""
    return "\n".join(message_text(m) for m in body["messages"])


def first_user_text(body: dict[str, Any]) -> str:
    return next((message_text(m) for m in body["messages"] if m.get("role") == "user"), "")


def tool_descriptions(body: dict[str, Any]) -> str:
    """The ``function.description`` of every tool offered, one per line."""
    lines = []
    for tool in body.get("tools") or []:
        function = tool.get("function") or {}
        if isinstance(function.get("description"), str):
            lines.append(function["description"])
    return "\n".join(lines)


def instruction_text(body: dict[str, Any]) -> str:
    """What the agent role scores: system (and developer) messages, the first user message and
    the tool descriptions. Later turns (tool results) never change it, so one episode is one draw.
    """
    system = [message_text(m) for m in body["messages"] if m.get("role") in ("system", "developer")]
    return "\n".join([*system, first_user_text(body), tool_descriptions(body)])


def prompt_tokens(body: dict[str, Any]) -> int:
    """Estimated prompt tokens: text at four characters a token plus a flat cost per image."""
    images = sum(
        1
        for m in body["messages"]
        if isinstance(m.get("content"), list)
        for part in m["content"]
        if isinstance(part, dict) and part.get("type") == "image_url"
    )
    return estimate_tokens(all_text(body) + tool_descriptions(body)) + IMAGE_TOKENS * images


def extract_document(text: str) -> str | None:
    """The document between DOCUMENT_OPEN and DOCUMENT_CLOSE (the last such pair), or None."""
    start = text.rfind(DOCUMENT_OPEN)
    if start < 0:
        return None
    end = text.find(DOCUMENT_CLOSE, start)
    inner = text[start + len(DOCUMENT_OPEN) : end if end >= 0 else len(text)]
    return inner.strip("\n")


def extract_under_test(text: str) -> str:
    """The text the edit sets listed between UNDER_TEST_OPEN and UNDER_TEST_CLOSE would add ("" if none).

    Each set is a fenced JSON block; its edits' texts (or its body) are what a proposer told "do
    not repeat these" would avoid. A block that is not JSON counts as its raw text.
    """
    start = text.rfind(UNDER_TEST_OPEN)
    if start < 0:
        return ""
    end = text.find(UNDER_TEST_CLOSE, start)
    inner = text[start + len(UNDER_TEST_OPEN) : end if end >= 0 else len(text)]
    parts: list[str] = []
    for block in _JSON_BLOCK.findall(inner):
        try:
            data = json.loads(block)
        except ValueError:
            parts.append(block)
            continue
        edits = data.get("edits") if isinstance(data, dict) else None
        parts += [str(e.get("text", "")) for e in edits or [] if isinstance(e, dict)]
        if isinstance(data, dict) and isinstance(data.get("body"), str):
            parts.append(data["body"])
    return "\n".join(parts)


def document_body(document: str) -> str:
    """The editable body of a skill document: everything before the momentum marker line."""
    lines = document.split("\n")
    for index, line in enumerate(lines):
        if line.strip() == MOMENTUM_MARKER:
            return "\n".join(lines[:index])
    return document


def sampling_seed(body: dict[str, Any]) -> object:
    """The request ``seed`` when the request samples, else None: greedy decoding never reads it."""
    temperature = body.get("temperature")
    return None if temperature is not None and temperature <= 0 else body.get("seed")


def draw_index(body: dict[str, Any]) -> int:
    """Which independent draw a reply is: the request's ``sample_idx`` when the request samples, else 0.

    A real server ignores ``sample_idx``: at temperature 0 (greedy) or with a fixed ``seed`` it
    gives identical requests the same reply, however many sample indices the client counts. The
    simulator does the same, so a harness that pays for several samples of a greedy request sees
    them come back identical here too. Only a sampling request (temperature above 0, or unset: a
    server's default samples) without a seed reads the index, standing in for a server's fresh
    randomness while keeping every reply reproducible.
    """
    temperature = body.get("temperature")
    if body.get("seed") is not None or (temperature is not None and temperature <= 0):
        return 0
    value = body.get(SAMPLE_IDX_KEY, 0)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
