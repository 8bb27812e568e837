"""Patch edits, example by example: ambiguity, overlaps in either order, where each edit lands."""

from __future__ import annotations

import pytest
from skills_support import BODY, patch, refused

from skillharness.skills import (
    EditLimits,
    EditSet,
    Refusal,
    RefusalReason,
    SkillDocument,
    apply_edit_set,
    apply_edit_set_to_text,
)
from skillharness.skills.markers import MOMENTUM_MARKER


def body_of(result: object) -> str:
    assert isinstance(result, SkillDocument), result
    return result.body


@pytest.mark.parametrize(
    "edits",
    [
        # An insertion listed before the span that contains it: refused, as in the other order.
        (("insert_after", "Read", "X"), ("replace", "Read the text", "1")),
        (("insert_before", "the text", "X"), ("delete", "Read the text.", "")),
        (("replace", "Read the text", "1"), ("insert_after", "Read", "X")),
        # Two spans that share characters, in both orders.
        (("replace", "Read the", "1"), ("replace", "the text", "2")),
        (("replace", "the text", "2"), ("replace", "Read the", "1")),
        # One span inside another.
        (("replace", "the", "1"), ("delete", "Read the text.", "")),
    ],
)
def test_overlapping_edits_are_refused_whatever_their_order(
    sample_doc: SkillDocument, edits: tuple[tuple[str, str, str], ...]
) -> None:
    refusal = refused(apply_edit_set(sample_doc, patch(*edits)), RefusalReason.OVERLAPPING_SPANS)
    assert refusal.detail == "edits 0 and 1 touch overlapping spans"
    assert refusal.edit_index == 1


def test_an_anchor_found_exactly_twice_is_ambiguous() -> None:
    doc = SkillDocument.author("Zoom in. Then zoom out. Zoom in.\n", "A\n")
    refusal = refused(
        apply_edit_set(doc, patch(("replace", "Zoom in.", "Look."))), RefusalReason.ANCHOR_AMBIGUOUS
    )
    assert refusal.detail == "anchor occurs 2 times in the body"
    assert refusal.edit_index == 0


def test_overlapping_occurrences_count_as_two() -> None:
    doc = SkillDocument.author("xaaay\n", "A\n")
    refusal = refused(apply_edit_set(doc, patch(("delete", "aa", ""))), RefusalReason.ANCHOR_AMBIGUOUS)
    assert refusal.detail == "anchor occurs 2 times in the body"
    assert apply_edit_set_to_text("aaa", patch(("delete", "aa", ""))) == Refusal(
        reason=RefusalReason.ANCHOR_AMBIGUOUS, detail="anchor occurs 2 times in the body", edit_index=0
    )


def test_the_refusal_names_the_edit_that_failed(sample_doc: SkillDocument) -> None:
    result = apply_edit_set(sample_doc, patch(("replace", "OCR", "Text"), ("delete", "no such words", "")))
    refusal = refused(result, RefusalReason.ANCHOR_ABSENT)
    assert (refusal.edit_index, refusal.detail) == (1, "anchor not found in the body")


def test_an_anchor_only_outside_the_body_says_so(sample_doc: SkillDocument) -> None:
    refusal = refused(
        apply_edit_set(sample_doc, patch(("delete", "zoom in", ""))), RefusalReason.SPAN_OUTSIDE_BODY
    )
    assert refusal.detail == "anchor occurs only outside the body"
    # An anchor starting exactly where the body ends starts outside it.
    at_marker = refused(
        apply_edit_set(sample_doc, patch(("delete", MOMENTUM_MARKER[:12], ""))),
        RefusalReason.SPAN_OUTSIDE_BODY,
    )
    assert at_marker.detail == "anchor occurs only outside the body"


def test_an_anchor_crossing_the_body_end_says_where(sample_doc: SkillDocument) -> None:
    anchor = "here.\n" + MOMENTUM_MARKER[:4]
    refusal = refused(
        apply_edit_set(sample_doc, patch(("delete", anchor, ""))), RefusalReason.SPAN_OUTSIDE_BODY
    )
    start = len(BODY) - len("here.\n")
    assert (
        refusal.detail
        == f"anchor span [{start}, {start + len(anchor)}) reaches past the body end at {len(BODY)}"
    )


def test_an_anchor_ending_exactly_at_the_body_end_is_inside(sample_doc: SkillDocument) -> None:
    assert body_of(apply_edit_set(sample_doc, patch(("replace", "Unique line here.\n", "Last.\n")))) == (
        "# OCR\n\nRead the text.\nCount twice.\nLast.\n"
    )


def test_insertion_at_the_start_of_a_replaced_span_lands_before_the_replacement(
    sample_doc: SkillDocument,
) -> None:
    result = apply_edit_set(
        sample_doc, patch(("replace", "Read the", "Scan the"), ("insert_before", "Read", ">> "))
    )
    assert body_of(result) == "# OCR\n\n>> Scan the text.\nCount twice.\nUnique line here.\n"
    result = apply_edit_set(
        sample_doc, patch(("insert_before", "Read", ">> "), ("replace", "Read the", "Scan the"))
    )
    assert body_of(result) == "# OCR\n\n>> Scan the text.\nCount twice.\nUnique line here.\n"


def test_insertion_at_the_end_of_a_replaced_span_lands_after_it(sample_doc: SkillDocument) -> None:
    result = apply_edit_set(
        sample_doc, patch(("insert_after", "Read the", " whole"), ("replace", "Read the", "Scan the"))
    )
    assert body_of(result) == "# OCR\n\nScan the whole text.\nCount twice.\nUnique line here.\n"


def test_edits_in_any_order_apply_at_their_own_places(sample_doc: SkillDocument) -> None:
    result = apply_edit_set(
        sample_doc,
        patch(("replace", "Unique", "Only"), ("delete", "# OCR\n", ""), ("insert_after", "Count", " again")),
    )
    assert body_of(result) == "\nRead the text.\nCount again twice.\nOnly line here.\n"


def test_insertions_at_two_different_points_do_not_clash(sample_doc: SkillDocument) -> None:
    result = apply_edit_set(
        sample_doc, patch(("insert_before", "Count", "1 "), ("insert_after", "Count", " 2"))
    )
    assert body_of(result) == "# OCR\n\nRead the text.\n1 Count 2 twice.\nUnique line here.\n"


def test_exactly_the_edit_limit_is_allowed(sample_doc: SkillDocument) -> None:
    limits = EditLimits(max_edits=2)
    two = patch(("insert_after", "OCR", "!"), ("insert_after", "twice", "!"))
    assert (
        body_of(apply_edit_set(sample_doc, two, limits))
        == "# OCR!\n\nRead the text.\nCount twice!.\nUnique line here.\n"
    )
    three = patch(("insert_after", "OCR", "!"), ("insert_after", "twice", "!"), ("delete", "Unique ", ""))
    refusal = refused(apply_edit_set(sample_doc, three, limits), RefusalReason.TOO_MANY_EDITS)
    assert refusal.detail == "3 edits, at most 2"


def test_a_body_exactly_at_the_budget_fits(sample_doc: SkillDocument) -> None:
    limits = EditLimits(max_body_chars=len(BODY) + 1)
    assert body_of(apply_edit_set(sample_doc, patch(("insert_after", "OCR", "!")), limits)).count("!") == 1
    refused(
        apply_edit_set(sample_doc, patch(("insert_after", "OCR", "!!")), limits), RefusalReason.OVER_BUDGET
    )


def test_default_limits_apply_when_none_are_given() -> None:
    default = EditLimits()
    text = "a\n"
    refused(
        apply_edit_set_to_text(text, patch(("insert_after", "a", "b" * default.max_body_chars))),
        RefusalReason.OVER_BUDGET,
    )
    too_many = patch(*[("insert_after", "a", "!")] * (default.max_edits + 1))
    refused(apply_edit_set_to_text(text, too_many), RefusalReason.TOO_MANY_EDITS)


def test_an_unencodable_result_is_refused(sample_doc: SkillDocument) -> None:
    refusal = refused(
        apply_edit_set(sample_doc, patch(("insert_after", "OCR", "\ud800"))), RefusalReason.MALFORMED_EDIT
    )
    assert refusal.detail == "text is not encodable as UTF-8"


def test_a_rewrite_to_an_empty_body_stays_empty(sample_doc: SkillDocument) -> None:
    rewrite = EditSet(skill_update_mode="rewrite", edits=(), body="", rationale="r")
    result = apply_edit_set(sample_doc, rewrite)
    assert body_of(result) == ""
    assert result.render().startswith(MOMENTUM_MARKER)


def test_adjacent_spans_do_not_overlap(sample_doc: SkillDocument) -> None:
    result = apply_edit_set(sample_doc, patch(("replace", "Read", "Scan"), ("replace", " the text", " it")))
    assert body_of(result) == "# OCR\n\nScan it.\nCount twice.\nUnique line here.\n"
