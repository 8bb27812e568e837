"""Apply an edit set to a body, all or nothing, refusing with a reason instead of raising.

Spans are computed in *document* coordinates (the full rendered text), so an anchor that crosses
a marker, or lies in the momentum or appendix region, is seen for what it is and refused; the
whole span — not only its start — must lie inside the body (audit P1-6).
"""

from __future__ import annotations

from dataclasses import dataclass

from skillharness.skills.document import SkillDocument, ensure_trailing_newline
from skillharness.skills.edits import Edit, EditLimits, EditOp, EditSet, Refusal, RefusalReason
from skillharness.skills.markers import MARKER_LIKE

__all__ = ["apply_edit_set", "apply_edit_set_to_text"]


@dataclass(frozen=True, slots=True)
class _Span:
    start: int
    end: int
    text: str
    index: int


def apply_edit_set(
    document: SkillDocument, edit_set: EditSet, limits: EditLimits | None = None
) -> SkillDocument | Refusal:
    """Apply ``edit_set`` to the body of ``document``; momentum and appendix are untouched.

    Returns the new document, or a :class:`Refusal` (and ``document`` is, being immutable,
    unchanged).
    """
    outcome = _new_body(
        document.render(), document.body_end, edit_set, limits or EditLimits(), terminate=True
    )
    if isinstance(outcome, Refusal):
        return outcome
    return document._with_body(outcome)


def apply_edit_set_to_text(text: str, edit_set: EditSet, limits: EditLimits | None = None) -> str | Refusal:
    """Apply ``edit_set`` to a region-less text (system prompt, tool description), all of it body."""
    return _new_body(text, len(text), edit_set, limits or EditLimits(), terminate=text.endswith("\n"))


def _refuse(reason: RefusalReason, detail: str, index: int | None = None) -> Refusal:
    return Refusal(reason=reason, detail=detail, edit_index=index)


def _new_body(
    doc_text: str, body_end: int, edit_set: EditSet, limits: EditLimits, *, terminate: bool
) -> str | Refusal:
    """The edited body, ending in a newline when ``terminate``, checked as it will be stored."""
    if edit_set.skill_update_mode == "rewrite":
        if edit_set.body is None:
            return _refuse(RefusalReason.MALFORMED_EDIT, "rewrite mode needs a non-null body")
        candidate = edit_set.body
    else:
        candidate_or_refusal = _patched(doc_text, body_end, edit_set.edits, limits)
        if isinstance(candidate_or_refusal, Refusal):
            return candidate_or_refusal
        candidate = candidate_or_refusal
    # Terminate before the checks, so the budget counts the newline the stored body will have.
    return _check_result(ensure_trailing_newline(candidate) if terminate else candidate, limits)


def _check_result(body: str, limits: EditLimits) -> str | Refusal:
    if not _encodable(body):
        return _refuse(RefusalReason.MALFORMED_EDIT, "text is not encodable as UTF-8")
    # Also catches a marker-like sequence formed by joining two harmless pieces.
    if MARKER_LIKE.search(body):
        return _refuse(RefusalReason.MARKER_IN_TEXT, "the resulting body contains a marker-like sequence")
    if len(body) > limits.max_body_chars:
        return _refuse(
            RefusalReason.OVER_BUDGET, f"body would be {len(body)} chars, budget is {limits.max_body_chars}"
        )
    return body


def _patched(doc_text: str, body_end: int, edits: tuple[Edit, ...], limits: EditLimits) -> str | Refusal:
    if not edits:
        return _refuse(RefusalReason.MALFORMED_EDIT, "patch mode needs at least one edit")
    if len(edits) > limits.max_edits:
        return _refuse(RefusalReason.TOO_MANY_EDITS, f"{len(edits)} edits, at most {limits.max_edits}")
    spans: list[_Span] = []
    for index, edit in enumerate(edits):
        span = _resolve(doc_text, body_end, edit, index)
        if isinstance(span, Refusal):
            return span
        spans.append(span)
    clash = _first_overlap(spans)
    if clash is not None:
        return clash
    body = doc_text[:body_end]
    # Right to left, so earlier offsets stay valid; at equal starts the wider span goes first so an
    # insertion at the start of a replaced span lands before the replacement.
    for span in sorted(spans, key=lambda s: (s.start, s.end), reverse=True):
        body = body[: span.start] + span.text + body[span.end :]
    return body


def _resolve(doc_text: str, body_end: int, edit: Edit, index: int) -> _Span | Refusal:
    if not edit.anchor:
        return _refuse(RefusalReason.MALFORMED_EDIT, "empty anchor", index)
    text = "" if edit.op is EditOp.DELETE else edit.text
    if MARKER_LIKE.search(text):
        return _refuse(RefusalReason.MARKER_IN_TEXT, "edit text contains a marker-like sequence", index)
    starts = _occurrences(doc_text, edit.anchor)
    in_body = [s for s in starts if s < body_end]
    if len(in_body) > 1:
        return _refuse(
            RefusalReason.ANCHOR_AMBIGUOUS, f"anchor occurs {len(in_body)} times in the body", index
        )
    if not in_body:
        if starts:
            return _refuse(RefusalReason.SPAN_OUTSIDE_BODY, "anchor occurs only outside the body", index)
        return _refuse(RefusalReason.ANCHOR_ABSENT, "anchor not found in the body", index)
    start = in_body[0]
    end = start + len(edit.anchor)
    if end > body_end:
        return _refuse(
            RefusalReason.SPAN_OUTSIDE_BODY,
            f"anchor span [{start}, {end}) reaches past the body end at {body_end}",
            index,
        )
    if edit.op is EditOp.INSERT_BEFORE:
        return _Span(start, start, text, index)
    if edit.op is EditOp.INSERT_AFTER:
        return _Span(end, end, text, index)
    return _Span(start, end, text, index)


def _occurrences(haystack: str, needle: str) -> list[int]:
    """Every start offset of ``needle``, overlapping ones included (``"aa"`` in ``"aaa"`` is 2)."""
    found: list[int] = []
    at = haystack.find(needle)
    while at != -1:
        found.append(at)
        at = haystack.find(needle, at + 1)
    return found


def _overlaps(a: _Span, b: _Span) -> bool:
    a_point, b_point = a.start == a.end, b.start == b.end
    if a_point and b_point:
        return a.start == b.start  # two insertions at one point: their order would be a guess
    if a_point:
        return b.start < a.start < b.end
    if b_point:
        return a.start < b.start < a.end
    return max(a.start, b.start) < min(a.end, b.end)


def _first_overlap(spans: list[_Span]) -> Refusal | None:
    for i, first in enumerate(spans):
        for second in spans[i + 1 :]:
            if _overlaps(first, second):
                return _refuse(
                    RefusalReason.OVERLAPPING_SPANS,
                    f"edits {first.index} and {second.index} touch overlapping spans",
                    second.index,
                )
    return None


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
