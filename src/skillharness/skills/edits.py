"""Edit sets as the evolve role returns them, and refusals as machine-readable data.

The models mirror ``RESPONSE_SCHEMAS[Role.EVOLVE]`` exactly (a test keeps them in agreement).
Semantic rules that the JSON schema cannot express (a rewrite needs a body, a patch needs edits)
are refusals raised when the set is applied, not validation errors, so the models accept exactly
what the schema accepts.
"""

from __future__ import annotations

import json
import re
from enum import StrEnum
from typing import Any, Literal

from pydantic import ConfigDict, Field, ValidationError

from skillharness.util.model import StrictModel, describe_validation, validation_problems

__all__ = [
    "Edit",
    "EditLimits",
    "EditOp",
    "EditSet",
    "Refusal",
    "RefusalReason",
    "parse_edit_set",
]


class EditOp(StrEnum):
    """Where an edit's ``text`` goes relative to its anchor."""

    INSERT_AFTER = "insert_after"
    INSERT_BEFORE = "insert_before"
    REPLACE = "replace"
    DELETE = "delete"


class Edit(StrictModel):
    """One patch op on an anchor that must occur exactly once in the body. ``delete`` ignores ``text``."""

    model_config = ConfigDict(strict=True)

    op: EditOp
    anchor: str
    text: str


class EditSet(StrictModel):
    """What the evolve role proposes for one target (a body-only change, by construction)."""

    model_config = ConfigDict(strict=True)

    skill_update_mode: Literal["patch", "rewrite"]
    edits: tuple[Edit, ...]
    body: str | None = None
    rationale: str


class EditLimits(StrictModel):
    """Caps every applied edit set obeys."""

    max_edits: int = Field(8, ge=1, description="Most edits in one patch set.")
    max_body_chars: int = Field(
        8000, ge=1, description="Longest body (characters) an edit may produce; longer → refused."
    )


class RefusalReason(StrEnum):
    """Why an edit set was not applied (stable strings: stored and counted by training)."""

    ANCHOR_ABSENT = "anchor_absent"
    ANCHOR_AMBIGUOUS = "anchor_ambiguous"
    SPAN_OUTSIDE_BODY = "span_outside_body"
    MARKER_IN_TEXT = "marker_in_text"
    OVER_BUDGET = "over_budget"
    OVERLAPPING_SPANS = "overlapping_spans"
    TOO_MANY_EDITS = "too_many_edits"
    MALFORMED_JSON = "malformed_json"
    MALFORMED_EDIT = "malformed_edit"


class Refusal(StrictModel):
    """A refused edit set: the document is unchanged. ``edit_index`` points into ``edits``."""

    reason: RefusalReason
    detail: str
    edit_index: int | None = None


_FENCE = re.compile(r"```[A-Za-z0-9_-]*[ \t]*\r?\n(.*?)```", re.DOTALL)


def _extract_json(raw: str) -> str:
    """The JSON object inside an answer: fenced block if present, else first ``{`` to last ``}``."""
    fenced = _FENCE.search(raw)
    if fenced:
        return fenced.group(1).strip()
    text = raw.strip()
    if text.startswith("{"):
        return text
    start, end = text.find("{"), text.rfind("}")
    return text[start : end + 1] if 0 <= start < end else text


def parse_edit_set(raw: str | bytes | dict[str, Any]) -> EditSet | Refusal:
    """Parse an evolve answer (text or already-decoded JSON) into an :class:`EditSet`.

    Never raises for bad input: malformed JSON → ``malformed_json``; wrong, missing or extra
    fields or types → ``malformed_edit``, with pydantic's first error as the detail.
    """
    try:
        if isinstance(raw, dict):
            payload = json.dumps(raw, allow_nan=False)
        else:
            text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
            payload = _extract_json(text)
            json.loads(payload)
    except (ValueError, TypeError, RecursionError) as exc:
        return Refusal(reason=RefusalReason.MALFORMED_JSON, detail=f"not a JSON object: {exc}"[:300])
    try:
        return EditSet.model_validate_json(payload)
    except ValidationError as exc:
        first = validation_problems(exc)[0]
        reason = (
            RefusalReason.MALFORMED_JSON if first.kind == "json_invalid" else RefusalReason.MALFORMED_EDIT
        )
        loc = first.loc
        index = loc[1] if len(loc) > 1 and loc[0] == "edits" and isinstance(loc[1], int) else None
        return Refusal(
            reason=reason, detail=describe_validation(exc, limit=1, max_chars=300), edit_index=index
        )
