"""Patch edits: exact-once anchors, whole-span checks (audit P1-6), all-or-nothing sets."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from skills_support import BODY, MOMENTUM, documents, edit_sets, patch, refused

from skillharness.skills import (
    EditLimits,
    EditOp,
    EditSet,
    Refusal,
    RefusalReason,
    SkillDocument,
    apply_edit_set,
    apply_edit_set_to_text,
)
from skillharness.skills.markers import APPENDIX_MARKER, MOMENTUM_MARKER


@pytest.mark.parametrize(
    ("op", "anchor", "text", "expected_body"),
    [
        (
            "insert_after",
            "Count twice.\n",
            "Check the scoreboard.\n",
            "Count twice.\nCheck the scoreboard.\nUnique",
        ),
        ("insert_before", "Count twice.", "Zoom. ", "text.\nZoom. Count twice.\n"),
        ("replace", "Read the text.", "Read every glyph.", "\nRead every glyph.\nCount"),
        ("delete", "Count twice.\n", "ignored", "Read the text.\nUnique line"),
    ],
)
def test_each_op(sample_doc: SkillDocument, op: str, anchor: str, text: str, expected_body: str) -> None:
    result = apply_edit_set(sample_doc, patch((op, anchor, text)))
    assert isinstance(result, SkillDocument)
    assert expected_body in result.body
    assert (result.momentum, result.appendix) == (sample_doc.momentum, sample_doc.appendix)


def test_several_edits_apply_together(sample_doc: SkillDocument) -> None:
    result = apply_edit_set(
        sample_doc,
        patch(("replace", "Read", "Scan"), ("insert_before", "Read", ">> "), ("insert_after", "here.", "!")),
    )
    assert isinstance(result, SkillDocument)
    assert result.body == "# OCR\n\n>> Scan the text.\nCount twice.\nUnique line here.!\n"


def test_p1_6_span_reaching_appendix_is_refused(sample_doc: SkillDocument) -> None:
    # Starts in the body, runs over both markers into the appendix: the start alone looks fine.
    anchor = "Unique line here.\n" + MOMENTUM_MARKER + "\n" + MOMENTUM + APPENDIX_MARKER + "\n## Answer"
    for op in ("delete", "replace"):
        result = refused(
            apply_edit_set(sample_doc, patch((op, anchor, "x"))), RefusalReason.SPAN_OUTSIDE_BODY
        )
        assert result.edit_index == 0


def test_p1_6_span_reaching_momentum_is_refused(sample_doc: SkillDocument) -> None:
    anchor = "line here.\n" + MOMENTUM_MARKER + "\nMomentum says"
    for op in ("delete", "replace", "insert_after", "insert_before"):
        refused(apply_edit_set(sample_doc, patch((op, anchor, "x"))), RefusalReason.SPAN_OUTSIDE_BODY)


def test_p1_6_anchor_spanning_a_marker_is_refused(sample_doc: SkillDocument) -> None:
    for anchor in ("here.\n<!-- skill", MOMENTUM_MARKER, "zoom in.\n" + APPENDIX_MARKER):
        refused(apply_edit_set(sample_doc, patch(("delete", anchor, ""))), RefusalReason.SPAN_OUTSIDE_BODY)


def test_p1_6_anchor_only_in_frozen_regions_never_matches(sample_doc: SkillDocument) -> None:
    for anchor in ("Momentum says", "Submit one letter."):
        refused(apply_edit_set(sample_doc, patch(("replace", anchor, "y"))), RefusalReason.SPAN_OUTSIDE_BODY)


def test_p1_6_text_containing_a_marker_is_refused(sample_doc: SkillDocument) -> None:
    for text in (f"\n{APPENDIX_MARKER}\n", f"x\n{MOMENTUM_MARKER}\n", "<!--  SKILLHARNESS:fake -->"):
        result = refused(
            apply_edit_set(sample_doc, patch(("insert_after", "Count twice.\n", text))),
            RefusalReason.MARKER_IN_TEXT,
        )
        assert result.edit_index == 0


def test_p1_6_joined_pieces_forming_a_marker_are_refused() -> None:
    doc = SkillDocument.author("see <!-- here\n", "app\n")
    refused(
        apply_edit_set(doc, patch(("replace", " here", " skillharness: x"))), RefusalReason.MARKER_IN_TEXT
    )


def test_anchor_matching_in_body_and_appendix_targets_the_body() -> None:
    doc = SkillDocument.author("Answer carefully.\n", "Answer with a letter.\n")
    result = apply_edit_set(doc, patch(("replace", "Answer", "Respond")))
    assert isinstance(result, SkillDocument)
    assert result.body == "Respond carefully.\n"
    assert result.appendix == "Answer with a letter.\n"


def test_every_refusal_reason(sample_doc: SkillDocument) -> None:
    cases = {
        RefusalReason.ANCHOR_ABSENT: patch(("replace", "no such text", "x")),
        RefusalReason.ANCHOR_AMBIGUOUS: patch(("replace", "e", "x")),
        RefusalReason.SPAN_OUTSIDE_BODY: patch(("delete", "Submit one letter.", "")),
        RefusalReason.MARKER_IN_TEXT: patch(("insert_after", "OCR", APPENDIX_MARKER)),
        RefusalReason.OVER_BUDGET: patch(("insert_after", "OCR", "y" * 9000)),
        RefusalReason.OVERLAPPING_SPANS: patch(("replace", "Read the", "x"), ("delete", "the text", "")),
        RefusalReason.TOO_MANY_EDITS: patch(*[("insert_after", "OCR", "!")] * 9),
        RefusalReason.MALFORMED_EDIT: patch(),
    }
    for reason, edit_set in cases.items():
        refused(apply_edit_set(sample_doc, edit_set), reason)
    refused(apply_edit_set(sample_doc, patch(("replace", "", "x"))), RefusalReason.MALFORMED_EDIT)
    rewrite_without_body = EditSet(skill_update_mode="rewrite", edits=(), body=None, rationale="r")
    refused(apply_edit_set(sample_doc, rewrite_without_body), RefusalReason.MALFORMED_EDIT)
    assert {r for r in RefusalReason} - set(cases) == {
        RefusalReason.MALFORMED_JSON
    }  # tested in test_edits_json


@pytest.mark.parametrize(
    ("first", "second", "clash"),
    [
        (("insert_after", "OCR", "1"), ("insert_before", "\n\nRead", "2"), True),  # same point, order unknown
        (("replace", "Read the text", "1"), ("insert_after", "Read", "2"), True),  # point inside a span
        (("replace", "Read the", "1"), ("insert_before", "Read", "2"), False),  # point at the span start
        (("replace", "Read the", "1"), ("insert_after", "Read the", "2"), False),  # point at the span end
        (("delete", "Read the", ""), ("replace", "Read the", "2"), True),  # the same span twice
        (("replace", "Read", "1"), ("replace", "the text", "2"), False),
    ],
)
def test_overlap_rules(
    sample_doc: SkillDocument, first: tuple[str, str, str], second: tuple[str, str, str], clash: bool
) -> None:
    result = apply_edit_set(sample_doc, patch(first, second))
    assert isinstance(result, Refusal) is clash, result


def test_limits_are_configurable(sample_doc: SkillDocument) -> None:
    tight = EditLimits(max_edits=1, max_body_chars=len(BODY) + 2)
    refused(
        apply_edit_set(sample_doc, patch(("delete", "OCR", ""), ("delete", "Read", "")), tight),
        RefusalReason.TOO_MANY_EDITS,
    )
    assert isinstance(apply_edit_set(sample_doc, patch(("insert_after", "OCR", "!!")), tight), SkillDocument)
    refused(
        apply_edit_set(sample_doc, patch(("insert_after", "OCR", "!!!")), tight), RefusalReason.OVER_BUDGET
    )


def test_rewrite_replaces_the_whole_body_only(sample_doc: SkillDocument) -> None:
    rewrite = EditSet(skill_update_mode="rewrite", edits=(), body="# New body\nBe precise.", rationale="r")
    result = apply_edit_set(sample_doc, rewrite)
    assert isinstance(result, SkillDocument)
    assert result.body == "# New body\nBe precise.\n"
    assert (result.momentum, result.appendix) == (sample_doc.momentum, sample_doc.appendix)
    forged = EditSet(skill_update_mode="rewrite", edits=(), body=f"x\n{MOMENTUM_MARKER}\ny\n", rationale="r")
    refused(apply_edit_set(sample_doc, forged), RefusalReason.MARKER_IN_TEXT)
    huge = EditSet(skill_update_mode="rewrite", edits=(), body="z" * 9000, rationale="r")
    refused(apply_edit_set(sample_doc, huge), RefusalReason.OVER_BUDGET)


def test_plain_text_targets() -> None:
    assert apply_edit_set_to_text("Be brief.\n", patch(("replace", "brief", "exact"))) == "Be exact.\n"
    assert apply_edit_set_to_text("no newline", patch(("insert_after", "newline", "!"))) == "no newline!"
    refused(apply_edit_set_to_text("abc", patch(("replace", "zzz", "x"))), RefusalReason.ANCHOR_ABSENT)


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_p1_6_markers_and_frozen_regions_survive_any_edit_set(data: st.DataObject) -> None:
    doc = data.draw(documents())
    edit_set = data.draw(edit_sets(doc))
    before = doc.render()
    result = apply_edit_set(doc, edit_set)
    assert doc.render() == before  # the input is never changed
    if isinstance(result, Refusal):
        assert isinstance(result.reason, RefusalReason)
        return
    text = result.render()
    assert text.count(MOMENTUM_MARKER) == 1
    assert text.count(APPENDIX_MARKER) == 1
    assert result.momentum == doc.momentum
    assert result.appendix == doc.appendix
    assert text.endswith(doc._momentum_line + doc.momentum + doc._appendix_line + doc.appendix)
    parsed = SkillDocument.parse(text)
    assert parsed == result
    # Bytes, not only ==: equality must not be what makes this property hold.
    assert (parsed.body, parsed.momentum, parsed.appendix) == (result.body, result.momentum, result.appendix)
    assert text.startswith(result.body)


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_a_single_applied_edit_matches_a_reference_implementation(data: st.DataObject) -> None:
    doc = data.draw(documents())
    edit_set = data.draw(edit_sets(doc))
    result = apply_edit_set(doc, edit_set)
    if isinstance(result, Refusal) or edit_set.skill_update_mode != "patch" or len(edit_set.edits) != 1:
        return
    edit = edit_set.edits[0]
    assert doc.body.count(edit.anchor) >= 1
    new = {
        EditOp.REPLACE: edit.text,
        EditOp.DELETE: "",
        EditOp.INSERT_AFTER: edit.anchor + edit.text,
        EditOp.INSERT_BEFORE: edit.text + edit.anchor,
    }[edit.op]
    expected = doc.body.replace(edit.anchor, new, 1)
    assert result.body in (expected, expected + "\n")


def test_budget_counts_the_newline_the_stored_body_gets(sample_doc: SkillDocument) -> None:
    limits = EditLimits(max_body_chars=10)
    # "0123456789" is 10 chars, but stored it ends in a newline: 11 > 10.
    over = EditSet(skill_update_mode="rewrite", edits=(), body="0123456789", rationale="r")
    refused(apply_edit_set(sample_doc, over, limits), RefusalReason.OVER_BUDGET)
    fits = EditSet(skill_update_mode="rewrite", edits=(), body="012345678", rationale="r")
    result = apply_edit_set(sample_doc, fits, limits)
    assert isinstance(result, SkillDocument)
    assert result.body == "012345678\n"
    assert len(result.body) <= limits.max_body_chars
    # A region-less text keeps its own ending and is measured as stored.
    assert apply_edit_set_to_text("abc", over, limits) == "0123456789"
    refused(apply_edit_set_to_text("abc\n", over, limits), RefusalReason.OVER_BUDGET)
