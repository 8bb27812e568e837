"""Credit for each part of a merged set (train.gate.merge_credit each_part), in process: the
packaged bundle in a temporary workspace and a fake context (unit_support.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from unit_support import COUNTING_SKILL, FakeContext, line_candidate, never, open_test, workspace

from skillharness.skills import Bundle, EditSet, Workspace
from skillharness.train.loop.merged_credit import credit_parts, partner_of, reopen_orphans
from skillharness.train.loop.open_gates import open_candidate
from skillharness.train.state.checkpoint import Checkpoint, OpenCandidate
from skillharness.train.state.records import GateOutcome, GateReason

CURSOR = {"epoch": 1, "step": 3, "target": 0}
EACH = {
    "n_max": 48,
    "first_stage": 8,
    "min_effect": None,
    "merge_min_wealth": 1.0,
    "merge_credit": "each_part",
}
ACCEPTED = GateOutcome(GateReason.ACCEPT, "wealth 21 >= 20", alpha=0.05, evidence={"draws": 16})


async def _merged(ctx: FakeContext, ws: Workspace, initial: Bundle) -> Checkpoint:
    """A counting test and a second counting proposal merged into it (both open)."""
    ckpt = Checkpoint(run_id="t-unit", baseline_run_id="t-unit.baseline")
    first = line_candidate(initial, COUNTING_SKILL, "first", nth=1)
    ckpt, _ = await open_candidate(ctx.typed(), ws, ckpt, first, cursor=CURSOR, check_stop=never)
    second = line_candidate(initial, COUNTING_SKILL, "second", nth=0)
    ckpt, status = await open_candidate(ctx.typed(), ws, ckpt, second, cursor=CURSOR, check_stop=never)
    assert status == "opened"
    assert ckpt.open[1].merged_with == [ckpt.open[0].key]
    return ckpt


async def _partner_closed(
    ctx: FakeContext, tmp_path: Path
) -> tuple[Workspace, Bundle, OpenCandidate, OpenCandidate, Checkpoint, GateOutcome]:
    """A merged set whose partner just closed as reject_inertia: (workspace, initial bundle,
    partner, set, the checkpoint without the partner, the partner's outcome)."""
    ws, initial = workspace(tmp_path)
    ckpt = await _merged(ctx, ws, initial)
    partner, merged = ckpt.open
    closed = ckpt.model_copy(update={"open": [merged]})
    inertia = GateOutcome(GateReason.REJECT_INERTIA, "futility plausible", alpha=0.05)
    return ws, initial, partner, merged, closed, inertia


def _observed(ckpt: Checkpoint, partner: list[int], merged: list[int]) -> Checkpoint:
    p, m = ckpt.open
    return ckpt.model_copy(
        update={
            "open": [p.model_copy(update={"observed": partner}), m.model_copy(update={"observed": merged})]
        }
    )


@pytest.mark.parametrize(
    ("partner", "merged", "lands"),
    [
        ([1, 0, 0, 0], [1, 1, 0, 0], True),  # the set measured more: its later proposal added something
        ([1, 1, 0, 0], [1, 1, 0, 0], False),  # no more than the partner alone
        ([1, 1, 1, 0], [1, 1, 0, 0], False),
        ([], [1, 1, 1, 1], False),  # the partner has drawn nothing yet: nothing to credit the part with
    ],
    ids=["more", "equal", "less", "partner_undrawn"],
)
async def test_a_merged_accept_lands_only_when_it_measured_more_than_its_open_partner(
    tmp_path: Path, partner: list[int], merged: list[int], lands: bool
) -> None:
    ctx = FakeContext(gate=EACH)
    ws, initial = workspace(tmp_path)
    ckpt = _observed(await _merged(ctx, ws, initial), partner, merged)
    outcome = credit_parts(ctx.typed(), ckpt, ckpt.open[1], ACCEPTED)
    assert outcome.accepted is lands
    credit = outcome.evidence["part_credit"]
    assert credit["partner"] == ckpt.open[0].key
    assert credit["set_mean"] == sum(merged) / len(merged)
    assert credit["partner_mean"] == (sum(partner) / len(partner) if partner else None)
    assert outcome.evidence["draws"] == 16  # the test's own evidence is kept
    if not lands:
        assert outcome.reason is GateReason.REJECT_INERTIA
        assert (outcome.alpha, outcome.decision) == (ACCEPTED.alpha, ACCEPTED.decision)
        assert f"for its partner alone (gate {ckpt.open[0].key})" in outcome.detail
        assert "merge_credit each_part" in outcome.detail


async def test_set_credit_a_single_proposal_and_a_rejection_pass_unchanged(tmp_path: Path) -> None:
    ws, initial = workspace(tmp_path)
    ckpt = _observed(await _merged(FakeContext(gate=EACH), ws, initial), [1, 1], [0, 0])
    partner, merged = ckpt.open
    whole_set = FakeContext(gate={**EACH, "merge_credit": "set"}).typed()
    assert credit_parts(whole_set, ckpt, merged, ACCEPTED) is ACCEPTED
    each = FakeContext(gate=EACH).typed()
    assert credit_parts(each, ckpt, partner, ACCEPTED) is ACCEPTED  # one proposal: its own evidence
    rejected = GateOutcome(GateReason.REJECT_EVIDENCE, "wealth fell", alpha=0.05)
    assert credit_parts(each, ckpt, merged, rejected) is rejected
    # The partner landed (closed) and the set kept its edits: nothing left to compare with.
    alone = ckpt.model_copy(update={"open": [merged]})
    assert credit_parts(each, alone, merged, ACCEPTED) is ACCEPTED


def test_the_partner_is_followed_through_its_rebases() -> None:
    edit_set = EditSet(skill_update_mode="patch", edits=(), rationale="r")
    merged = open_test(3, COUNTING_SKILL, edit_set).model_copy(update={"merged_with": [1], "parts": 2})
    rebased = open_test(7, COUNTING_SKILL, edit_set).model_copy(update={"rebased_from": [1, 4]})
    other = open_test(2, COUNTING_SKILL, edit_set)
    ckpt = Checkpoint(run_id="r", baseline_run_id="r.b", open=[other, rebased, merged])
    assert partner_of(ckpt, merged) == rebased
    assert partner_of(ckpt.model_copy(update={"open": [other, merged]}), merged) is None


async def test_a_merged_set_whose_partner_closed_without_landing_reopens_alone(tmp_path: Path) -> None:
    ctx = FakeContext(gate=EACH)
    ws, initial, partner, merged, closed, rejected = await _partner_closed(ctx, tmp_path)
    after = reopen_orphans(ctx.typed(), ws, closed, partner, rejected)
    (alone,) = after.open
    assert (alone.merged_with, alone.own_edit_set, alone.parts, alone.invalid) == ([], None, 1, "")
    own = line_candidate(initial, COUNTING_SKILL, "second", nth=0).edit_set
    assert EditSet.model_validate_json(json.dumps(alone.edit_set)) == own
    # A new test: its own gate index, level and samples, and a record of the one it replaced.
    assert (alone.key, alone.rebased_from, alone.observed) == (closed.decision_index, [merged.key], [])
    assert after.gates_run == closed.gates_run + 1
    assert alone.choice_detail == f"reopened alone: its partner (gate {partner.key}) closed as reject_inertia"
    # The partner landed (its edits are in the incumbent: the set's rebase handles that), or the
    # whole set is credited: nothing is reopened.
    assert reopen_orphans(ctx.typed(), ws, closed, partner, ACCEPTED) is closed
    whole_set = FakeContext(gate={**EACH, "merge_credit": "set"}).typed()
    assert reopen_orphans(whole_set, ws, closed, partner, rejected) is closed


async def test_a_merged_set_that_cannot_reopen_alone_is_marked_to_close(tmp_path: Path) -> None:
    ctx = FakeContext(gate=EACH)
    ws, initial = workspace(tmp_path)
    ckpt = await _merged(ctx, ws, initial)
    partner, merged = ckpt.open
    gone = json.loads(line_candidate(initial, COUNTING_SKILL, "x", nth=0).edit_set.model_dump_json())
    gone["edits"][0]["anchor"] = "no such line in the document"
    lost = merged.model_copy(update={"own_edit_set": gone})
    rejected = GateOutcome(GateReason.REJECT_EVIDENCE, "wealth fell", alpha=0.05)
    (marked,) = reopen_orphans(
        ctx.typed(), ws, ckpt.model_copy(update={"open": [lost]}), partner, rejected
    ).open
    assert marked.key == merged.key
    assert marked.invalid.startswith(f"its partner (gate {partner.key}) closed as reject_evidence; reopening")


async def test_split_tests_a_partner_that_closed_for_too_little_evidence_again_beside_its_sets_proposal(
    tmp_path: Path,
) -> None:
    ctx = FakeContext(gate={**EACH, "merge_credit": "split"})
    ws, initial, partner, merged, closed, inertia = await _partner_closed(ctx, tmp_path)
    after = reopen_orphans(ctx.typed(), ws, closed, partner, inertia)
    alone, again = after.open
    own = line_candidate(initial, COUNTING_SKILL, "second", nth=0).edit_set
    assert EditSet.model_validate_json(json.dumps(alone.edit_set)) == own
    # The partner's edits, as a new test: its own gate index, level and fresh samples.
    assert again.edit_set == partner.edit_set
    assert (again.key, again.rebased_from, again.observed, again.wealth) == (
        alone.key + 1,
        [partner.key],
        [],
        1.0,
    )
    assert after.gates_run == closed.gates_run + 2
    assert after.alpha_spent == pytest.approx(closed.alpha_spent + 2 * again.alpha)
    assert again.choice_detail == f"tested again: its merged set (gate {merged.key}) was split"
    # Harm shown is no reason to test again: only the set's own proposal reopens.
    harm = GateOutcome(GateReason.REJECT_EVIDENCE, "wealth fell", alpha=0.05)
    (only,) = reopen_orphans(ctx.typed(), ws, closed, partner, harm).open
    assert only.edit_set == alone.edit_set
    # Without a set carrying it, a partner that closed is not tested again.
    bare = closed.model_copy(update={"open": []})
    assert reopen_orphans(ctx.typed(), ws, bare, partner, inertia) is bare


async def test_split_credits_a_passing_set_beside_its_open_partner_as_each_part_does(tmp_path: Path) -> None:
    ctx = FakeContext(gate={**EACH, "merge_credit": "split"})
    ws, initial = workspace(tmp_path)
    ckpt = _observed(await _merged(ctx, ws, initial), [1, 1, 0, 0], [1, 1, 0, 0])
    assert credit_parts(ctx.typed(), ckpt, ckpt.open[1], ACCEPTED).reason is GateReason.REJECT_INERTIA
