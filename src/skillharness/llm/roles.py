"""The wire contract between the harness and any model server.

Both sides import this module: the harness when it builds requests, the simulator when it tells
roles apart. A role is recognised by the request's ``tools`` (the agent) or by the *name* of the
JSON schema in ``response_format`` (every other role), which is what real OpenAI-compatible
servers (vLLM, SGLang, llama.cpp) accept too.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

__all__ = [
    "AGENT_TOOL_NAMES",
    "FRAME_LABEL",
    "RESPONSE_SCHEMAS",
    "SCHEMA_NAMES",
    "TOOL_GET_FRAMES",
    "TOOL_GET_SUBTITLES",
    "TOOL_PARAMETERS",
    "TOOL_SUBMIT_ANSWER",
    "UNDER_TEST_CLOSE",
    "UNDER_TEST_OPEN",
    "Role",
    "response_format",
    "role_of_request",
]


class Role(StrEnum):
    """Who is asking: used for routing, accounting and (in the simulator) behaviour."""

    AGENT = "agent"
    JUDGE = "judge"
    EVOLVE = "evolve"
    RANK = "rank"
    MOMENTUM = "momentum"
    CONSOLIDATE = "consolidate"


TOOL_GET_FRAMES = "get_frames"
TOOL_GET_SUBTITLES = "get_subtitles"
TOOL_SUBMIT_ANSWER = "submit_answer"
AGENT_TOOL_NAMES = (TOOL_GET_FRAMES, TOOL_GET_SUBTITLES, TOOL_SUBMIT_ANSWER)

# Parameter schemas are fixed; the *descriptions* of the tools live in the bundle and evolve.
TOOL_PARAMETERS: dict[str, dict[str, Any]] = {
    TOOL_GET_FRAMES: {
        "type": "object",
        "properties": {
            "start_s": {"type": "number", "description": "Start of the range, seconds."},
            "end_s": {"type": "number", "description": "End of the range, seconds."},
            "count": {"type": "integer", "minimum": 1, "description": "How many frames."},
        },
        "required": ["start_s", "end_s", "count"],
    },
    TOOL_GET_SUBTITLES: {
        "type": "object",
        "properties": {
            "start_s": {"type": "number"},
            "end_s": {"type": "number"},
        },
        "required": ["start_s", "end_s"],
    },
    TOOL_SUBMIT_ANSWER: {
        "type": "object",
        "properties": {"answer": {"type": "string", "description": "One option letter."}},
        "required": ["answer"],
    },
}

_EDIT = {
    "type": "object",
    "properties": {
        "op": {"type": "string", "enum": ["insert_after", "insert_before", "replace", "delete"]},
        "anchor": {"type": "string"},
        "text": {"type": "string"},
    },
    "required": ["op", "anchor", "text"],
    "additionalProperties": False,
}

RESPONSE_SCHEMAS: dict[Role, dict[str, Any]] = {
    Role.JUDGE: {
        "type": "object",
        "properties": {
            "verdict": {"type": "string", "enum": ["defect", "lapse", "uncertain"]},
            "target": {"type": "string", "enum": ["skill", "system", "tools"]},
            "reason": {"type": "string"},
        },
        "required": ["verdict", "target", "reason"],
        "additionalProperties": False,
    },
    Role.EVOLVE: {
        "type": "object",
        "properties": {
            "skill_update_mode": {"type": "string", "enum": ["patch", "rewrite"]},
            "edits": {"type": "array", "items": _EDIT},
            "body": {"type": ["string", "null"]},
            "rationale": {"type": "string"},
        },
        "required": ["skill_update_mode", "edits", "rationale"],
        "additionalProperties": False,
    },
    Role.RANK: {
        "type": "object",
        "properties": {"choice": {"type": "integer", "minimum": 0}, "reason": {"type": "string"}},
        "required": ["choice", "reason"],
        "additionalProperties": False,
    },
    Role.MOMENTUM: {
        "type": "object",
        "properties": {"guidance": {"type": "string"}},
        "required": ["guidance"],
        "additionalProperties": False,
    },
    Role.CONSOLIDATE: {
        "type": "object",
        "properties": {"system_prompt": {"type": "string"}},
        "required": ["system_prompt"],
        "additionalProperties": False,
    },
}

SCHEMA_NAMES: dict[Role, str] = {role: f"skillharness_{role.value}" for role in RESPONSE_SCHEMAS}
_ROLE_BY_SCHEMA = {name: role for role, name in SCHEMA_NAMES.items()}


def response_format(role: Role) -> dict[str, Any]:
    """The ``response_format`` body field asking for ``role``'s named, strict JSON schema."""
    return {
        "type": "json_schema",
        "json_schema": {"name": SCHEMA_NAMES[role], "strict": True, "schema": RESPONSE_SCHEMAS[role]},
    }


def role_of_request(body: dict[str, Any]) -> Role | None:
    """Which role a chat-completions request body plays, or ``None`` when it is none of ours."""
    fmt = body.get("response_format") or {}
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        name = (fmt.get("json_schema") or {}).get("name")
        if name in _ROLE_BY_SCHEMA:
            return _ROLE_BY_SCHEMA[name]
    names = {
        (tool.get("function") or {}).get("name") for tool in body.get("tools") or [] if isinstance(tool, dict)
    }
    if TOOL_SUBMIT_ANSWER in names:
        return Role.AGENT
    return None


# --- Text conventions inside prompts -------------------------------------------------------
# The agent labels each frame it shows with its time (seconds, one decimal), as a text part before
# the frame; a server that decodes a video itself (the simulator) shows its frames the same way.
FRAME_LABEL = "[frame at {seconds:.1f}s]"
# Templates wrap the document an evolve/momentum/consolidate call works on in these tags, so a
# server (the simulator, or a human reading a trace) can find it without guessing.
DOCUMENT_OPEN = "<current_document>"
DOCUMENT_CLOSE = "</current_document>"
# An evolve prompt lists the target's edit sets that are under test now between these tags, so a
# proposer (and the simulator) can tell them from the document and from rejected edits.
UNDER_TEST_OPEN = "<under_test>"
UNDER_TEST_CLOSE = "</under_test>"

# Top-level request-body key carrying ChatRequest.sample_idx to the server (send it through the
# OpenAI client's ``extra_body``). Real servers ignore unknown keys; the simulator draws a fresh
# sample per index only when the request samples (temperature above 0, no seed), as a real server
# gives a greedy or seeded request one reply.
SAMPLE_IDX_KEY = "sample_idx"

# Evolve-rank prompts introduce each candidate with a line starting with this heading, formatted
# with its 0-based index (the ``choice`` the rank schema returns), e.g. "### Candidate 0".
RANK_CANDIDATE_HEADING = "### Candidate {index}"
# A rank prompt that lets the role decline says so with this sentence; the reply's ``choice`` is
# then RANK_NONE. A server (the simulator) declines only when the prompt offers it.
RANK_NONE = -1
RANK_DECLINE_OFFER = "Answer choice -1 when no candidate is worth testing"
