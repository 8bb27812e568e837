"""Typed replies of the non-agent roles, and one parser per role that never raises.

Each model mirrors the role's named JSON schema in :data:`skillharness.llm.roles.RESPONSE_SCHEMAS`
(a test checks that the two agree field by field, so they cannot drift). The evolve role's reply
is :class:`skillharness.skills.EditSet`, parsed by :func:`skillharness.skills.parse_edit_set`.
A parser returns the model, or a :class:`ReplyRefusal` naming what was wrong, for any text at all.
"""

from __future__ import annotations

import json
import re
from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from skillharness.util.model import StrictModel, describe_validation

__all__ = [
    "ConsolidateReply",
    "JudgeReply",
    "MomentumReply",
    "RankReply",
    "ReplyRefusal",
    "parse_reply",
]


class _Reply(StrictModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class JudgeReply(_Reply):
    verdict: Literal["defect", "lapse", "uncertain"]
    target: Literal["skill", "system", "tools"]
    reason: str


class RankReply(_Reply):
    choice: int
    reason: str


class MomentumReply(_Reply):
    guidance: str


class ConsolidateReply(_Reply):
    system_prompt: str


class ReplyRefusal(StrictModel):
    """A reply that could not be used, and why (stored and counted, never raised)."""

    role: str
    detail: str


M = TypeVar("M", bound=BaseModel)
_FENCE = re.compile(r"```[A-Za-z0-9_-]*[ \t]*\r?\n(.*?)```", re.DOTALL)


def _json_object(text: str) -> object:
    fenced = _FENCE.search(text)
    body = fenced.group(1) if fenced else text
    start, end = body.find("{"), body.rfind("}")
    if start < 0 or end <= start:
        raise ValueError("no JSON object in the reply")
    return json.loads(body[start : end + 1])


def parse_reply(kind: type[M], raw: str | None) -> M | ReplyRefusal:
    """``raw`` (a model's text reply) as ``kind``, or a refusal naming the problem."""
    role = kind.__name__.removesuffix("Reply").lower()
    if raw is None or not raw.strip():
        return ReplyRefusal(role=role, detail="empty reply")
    try:
        data = _json_object(raw)
    except (ValueError, RecursionError) as exc:
        return ReplyRefusal(role=role, detail=f"not JSON: {exc}"[:300])
    try:
        return kind.model_validate(data)
    except ValidationError as exc:
        return ReplyRefusal(role=role, detail=describe_validation(exc, limit=1, max_chars=300))
