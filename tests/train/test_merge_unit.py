"""Merged edit sets, one function at a time: which open test a proposal joins, the joined set, and
an edit set less what has landed. In-process (the packaged bundle, a fake context); the merged
tests' run over a simulator is in test_merge.py."""

from __future__ import annotations

import pytest
from unit_support import (
    COUNTING_SKILL,
    OCR_SKILL,
    FakeContext,
    anchor,
    body,
    candidate,
    insert,
    open_test,
    patch,
)

from skillharness.skills import Edit, EditOp, EditSet, initial_bundle
from skillharness.train.config import GateConfig
from skillharness.train.evolve.merge import merge_partner, merged_proposal, under_test, without_landed
from skillharness.train.state.checkpoint import Checkpoint, OpenCandidate
from skillharness.train.state.records import Candidate

INITIAL = initial_bundle()
A0, A1 = anchor(INITIAL, COUNTING_SKILL, 0), anchor(INITIAL, COUNTING_SKILL, 1)


def _ckpt(*open_tests: OpenCandidate, epoch: int = 1, step: int = 0) -> Checkpoint:
    return Checkpoint(
        run_id="t-unit", baseline_run_id="t-unit.baseline", open=list(open_tests), epoch=epoch, step=step
    )


def _own(*edits: Edit, detail: str = "ranked first") -> Candidate:
    edit_set = patch(*edits, rationale="mine")
    return candidate(INITIAL, COUNTING_SKILL, edit_set, evidence=frozenset({"q1"}), choice_detail=detail)


def _partner(*edits: Edit, key: int = 4, wealth: float = 1.5) -> OpenCandidate:
    return open_test(key, COUNTING_SKILL, patch(*edits, rationale="theirs"), wealth=wealth, evidence=("q2",))


# --- merge_partner -----------------------------------------------------------------------------


def test_the_partner_is_the_targets_valid_open_test_with_the_most_wealth_the_older_on_a_tie() -> None:
    ctx = FakeContext(gate={"merge_min_wealth": 1.0}).typed()
    proposal = _own(insert(COUNTING_SKILL, A0, "mine"))
    edits = patch(insert(COUNTING_SKILL, A1, "theirs"))
    tests = [
        open_test(1, OCR_SKILL, edits, wealth=9.0),  # another target
        open_test(2, COUNTING_SKILL, edits, wealth=8.0, invalid="rebased onto v0003: refused"),
        open_test(3, COUNTING_SKILL, edits, wealth=1.0),
        open_test(5, COUNTING_SKILL, edits, wealth=2.0),
        open_test(4, COUNTING_SKILL, edits, wealth=2.0),
    ]
    partner = merge_partner(ctx, _ckpt(*tests), proposal)
    assert partner is not None
    assert partner.key == 4
    only_even = merge_partner(ctx, _ckpt(*tests[:3]), proposal)
    assert only_even is not None
    assert only_even.key == 3  # wealth exactly 1 does not lean against its candidate
    leaning = open_test(6, COUNTING_SKILL, edits, wealth=0.99)
    assert merge_partner(ctx, _ckpt(leaning, *tests[:2]), proposal) is None
    # The default bar (1.05): a test no draw has moved off 1 takes no partner.
    assert merge_partner(FakeContext().typed(), _ckpt(*tests[:3]), proposal) is None
    assert merge_partner(FakeContext().typed(), _ckpt(*tests), proposal).key == 4  # type: ignore[union-attr]


def test_a_partner_needs_the_wealth_merge_min_wealth_sets() -> None:
    edits = patch(insert(COUNTING_SKILL, A1, "theirs"))
    tests = _ckpt(
        open_test(3, COUNTING_SKILL, edits, wealth=1.9), open_test(5, COUNTING_SKILL, edits, wealth=1.2)
    )
    proposal = _own(insert(COUNTING_SKILL, A0, "mine"))
    assert merge_partner(FakeContext(gate={"merge_min_wealth": 2.0}).typed(), tests, proposal) is None
    partner = merge_partner(FakeContext(gate={"merge_min_wealth": 1.5}).typed(), tests, proposal)
    assert partner is not None
    assert partner.key == 3
    with pytest.raises(ValueError, match="merge_min_wealth"):
        GateConfig(merge_min_wealth=0.5)  # below 1 a partner would lean against its candidate


def test_a_set_carrying_merge_max_parts_proposals_takes_no_further_partner() -> None:
    edits = patch(insert(COUNTING_SKILL, A1, "theirs"))
    full = open_test(3, COUNTING_SKILL, edits, wealth=1.9).model_copy(update={"parts": 2})
    tests = _ckpt(full, open_test(5, COUNTING_SKILL, edits, wealth=1.2))
    proposal = _own(insert(COUNTING_SKILL, A0, "mine"))
    capped = merge_partner(FakeContext(gate={"merge_max_parts": 2}).typed(), tests, proposal)
    assert capped is not None
    assert capped.key == 5  # the richer test already carries two proposals
    assert merge_partner(FakeContext(gate={"merge_max_parts": 1}).typed(), tests, proposal) is None
    unlimited = merge_partner(FakeContext(gate={"merge_max_parts": 0}).typed(), tests, proposal)
    assert unlimited is not None
    assert unlimited.key == 3


def test_no_partner_when_merging_is_off_or_the_proposal_is_a_rewrite() -> None:
    tests = _ckpt(open_test(3, COUNTING_SKILL, patch(insert(COUNTING_SKILL, A1, "theirs")), wealth=3.0))
    proposal = _own(insert(COUNTING_SKILL, A0, "mine"))
    assert merge_partner(FakeContext(gate={"merge_open": False}).typed(), tests, proposal) is None
    rewrite = EditSet(skill_update_mode="rewrite", edits=(), body="Count.\n", rationale="r")
    whole = candidate(INITIAL, COUNTING_SKILL, rewrite)
    assert merge_partner(FakeContext().typed(), tests, whole) is None
    assert merge_partner(FakeContext().typed(), tests, proposal) is not None


# --- merged_proposal ---------------------------------------------------------------------------


def test_a_merged_set_is_the_partners_edits_then_the_proposals() -> None:
    theirs, mine = insert(COUNTING_SKILL, A1, "theirs"), insert(COUNTING_SKILL, A0, "mine")
    merged = merged_proposal(FakeContext().typed(), INITIAL, _partner(theirs), _own(mine))
    assert merged is not None
    assert merged.edit_set == EditSet(
        skill_update_mode="patch", edits=(theirs, mine), rationale="theirs | mine"
    )
    assert merged.evidence_ids == frozenset({"q1", "q2"})
    assert merged.choice_detail == "merged with open gate 4; ranked first"
    assert merged.target == COUNTING_SKILL
    plain = merged_proposal(FakeContext().typed(), INITIAL, _partner(theirs), _own(mine, detail=""))
    assert plain is not None
    assert plain.choice_detail == "merged with open gate 4"


@pytest.mark.parametrize(
    ("op", "joined"),
    [(EditOp.INSERT_AFTER, "\n- theirs\n- mine"), (EditOp.INSERT_BEFORE, "\n- mine\n- theirs")],
)
def test_two_insertions_at_one_anchor_become_one(op: EditOp, joined: str) -> None:
    theirs, mine = insert(COUNTING_SKILL, A0, "theirs", op=op), insert(COUNTING_SKILL, A0, "mine", op=op)
    merged = merged_proposal(FakeContext().typed(), INITIAL, _partner(theirs), _own(mine))
    assert merged is not None
    (edit,) = merged.edit_set.edits
    assert (edit.op, edit.anchor, edit.text) == (op, A0, joined)


def test_no_merge_when_the_sets_do_not_apply_together_or_add_nothing() -> None:
    ctx = FakeContext().typed()
    mine = _own(insert(COUNTING_SKILL, A0, "mine"))
    # The partner's set is a rewrite, or does not apply to the incumbent of the moment.
    rewrite = open_test(
        4, COUNTING_SKILL, EditSet(skill_update_mode="rewrite", edits=(), body="C.\n", rationale="r")
    )
    assert merged_proposal(ctx, INITIAL, rewrite, mine) is None
    gone = _partner(insert(COUNTING_SKILL, "a line the document lacks", "theirs"))
    assert merged_proposal(ctx, INITIAL, gone, mine) is None
    # The proposal's lines are the partner's: nothing of its own is left.
    same = _partner(insert(COUNTING_SKILL, A1, "mine"))
    assert merged_proposal(ctx, INITIAL, same, mine) is None
    # Together they break the limits (two edits at most here).
    two = _partner(
        insert(COUNTING_SKILL, A1, "a"), insert(COUNTING_SKILL, anchor(INITIAL, COUNTING_SKILL, 2), "b")
    )
    tight = FakeContext(train={"evolve": ctx.config.evolve.model_copy(update={"max_edits": 2})}).typed()
    assert merged_proposal(tight, INITIAL, two, mine) is None
    assert merged_proposal(ctx, INITIAL, two, mine) is not None


def test_no_merge_when_the_proposal_changes_nothing_the_partner_did_not() -> None:
    """A replace of the anchor by itself is an edit, but the joined text is the partner's alone."""
    ctx = FakeContext().typed()
    theirs = _partner(insert(COUNTING_SKILL, A1, "theirs"))
    noop = candidate(INITIAL, COUNTING_SKILL, patch(Edit(op=EditOp.REPLACE, anchor=A0, text=A0)))
    assert merged_proposal(ctx, INITIAL, theirs, noop) is None
    assert merged_proposal(ctx, INITIAL, theirs, _own(insert(COUNTING_SKILL, A0, "mine"))) is not None


# --- without_landed ----------------------------------------------------------------------------


def test_an_insertion_whose_lines_all_landed_is_dropped_normalised() -> None:
    landed = insert(COUNTING_SKILL, A0, "count twice")
    text = body(INITIAL, COUNTING_SKILL) + "\n-   count   twice  \n"
    fresh = insert(COUNTING_SKILL, A1, "count thrice")
    left = without_landed(patch(landed, fresh), text)
    assert left.edits == (fresh,)
    assert without_landed(patch(landed), text).edits == ()


def test_an_insertion_keeps_only_its_new_lines_and_their_newlines() -> None:
    edit = Edit(op=EditOp.INSERT_AFTER, anchor=A0, text="\n- old line\n- new line\n\n- old two\n")
    left = without_landed(patch(edit), "- old line\n- old two\n")
    (kept,) = left.edits
    assert kept.text == "\n- new line\n\n"
    assert (kept.op, kept.anchor) == (EditOp.INSERT_AFTER, A0)
    # Only blank lines left: nothing to insert.
    assert without_landed(patch(edit), "- old line\n- new line\n- old two\n").edits == ()
    # A new line that is only part of a longer landed line is new.
    assert without_landed(patch(edit), "- old line and more\n").edits == (edit,)


def test_a_set_with_nothing_landed_comes_back_as_it_is() -> None:
    replace = Edit(op=EditOp.REPLACE, anchor=A1, text="- count twice")
    fresh = insert(COUNTING_SKILL, A0, "count thrice")
    edits = patch(replace, fresh)
    assert without_landed(edits, "- count twice\n") is edits  # a replace is never trimmed
    rewrite = EditSet(skill_update_mode="rewrite", edits=(), body="- count twice\n", rationale="r")
    assert without_landed(rewrite, "- count twice\n") is rewrite
    partial = without_landed(patch(fresh, insert(COUNTING_SKILL, A1, "x")), "- x\n")
    assert partial.edits[0] is fresh
    assert partial.rationale == "test"


# --- under_test --------------------------------------------------------------------------------


def test_the_sets_under_test_are_those_open_before_the_step_strongest_first() -> None:
    a, b, c = (patch(insert(COUNTING_SKILL, A0, name), rationale=name) for name in ("a", "b", "c"))
    tests = [
        open_test(1, COUNTING_SKILL, a, wealth=1.0, opened=(1, 0)),
        open_test(2, COUNTING_SKILL, b, wealth=3.0, opened=(1, 1)),
        open_test(3, OCR_SKILL, c, wealth=0.5, opened=(1, 0)),
        open_test(4, COUNTING_SKILL, c, wealth=3.0, opened=(1, 2)),  # opened in the running step
        open_test(0, COUNTING_SKILL, c, wealth=1.0, opened=(2, 2)),  # the same step of another epoch
    ]
    shown = under_test(_ckpt(*tests, epoch=1, step=2))
    assert [v.rationale for v in shown["skill:counting_problem"]] == ["b", "c", "a"]
    assert [v.rationale for v in shown["skill:ocr_problems"]] == ["c"]
    assert EditSet.model_validate_json(shown["skill:ocr_problems"][0].edits_json) == c
    assert under_test(_ckpt(epoch=1, step=2)) == {}
