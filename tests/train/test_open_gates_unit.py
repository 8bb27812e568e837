"""Opening and rebasing a test, in process: the packaged bundle in a temporary workspace and a fake
context (unit_support.py), so each test runs in milliseconds. The same bookkeeping over a whole run
and a simulator is in test_open_candidates.py and test_merge.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from unit_support import (
    COUNTING,
    COUNTING_SKILL,
    OCR_SKILL,
    FakeContext,
    anchor,
    candidate,
    insert,
    line_candidate,
    patch,
    workspace,
)

from skillharness.errors import GateError
from skillharness.skills import (
    Bundle,
    Edit,
    EditOp,
    EditRecord,
    EditSet,
    EditTarget,
    VersionReason,
    Workspace,
)
from skillharness.store import GateDecisionRow
from skillharness.train.gate import gate_alpha
from skillharness.train.loop.decide import retire_sample_starts
from skillharness.train.loop.open_gates import candidate_of, is_stale, open_candidate, rebase, scope_hash
from skillharness.train.state.checkpoint import Checkpoint, OpenCandidate
from skillharness.train.state.records import Candidate
from skillharness.train.validate.paired_gate import draw_plan

CURSOR = {"epoch": 2, "step": 5, "target": 0}
# A partner at wealth 1 (a test with no draws yet) takes a merge here, so that the merge's
# bookkeeping is met without drawing; the default's bar is tested in test_merge_unit.py.
SMALL = {"n_max": 48, "first_stage": 8, "min_effect": None, "merge_min_wealth": 1.0}
LONG = "a line the document lacks"


def _ckpt(**update: Any) -> Checkpoint:
    return Checkpoint(run_id="t-unit", baseline_run_id="t-unit.baseline").model_copy(update=update)


def _accept(ws: Workspace, bundle: Bundle, target: EditTarget) -> str:
    return ws.commit(bundle, ws.current_version, EditRecord(target=target, reason=VersionReason.ACCEPTED))


async def _open(
    ctx: FakeContext, ws: Workspace, ckpt: Checkpoint, proposal: Candidate, checks: list[str] | None = None
) -> tuple[Checkpoint, str]:
    def check() -> None:
        if checks is not None:
            checks.append("check")

    return await open_candidate(ctx.typed(), ws, ckpt, proposal, cursor=CURSOR, check_stop=check)


# --- opening -----------------------------------------------------------------------------------


async def test_an_opened_test_takes_the_runs_next_index_level_and_samples(tmp_path: Path) -> None:
    ctx = FakeContext(gate=SMALL)
    ws, initial = workspace(tmp_path)
    proposal = candidate(
        initial, COUNTING_SKILL, patch(insert(COUNTING_SKILL, anchor(initial, COUNTING_SKILL), "x")),
        evidence=frozenset({"b", "a"}), choice_detail="ranked",
    )  # fmt: skip
    ckpt = _ckpt(decision_index=5, gates_run=2, alpha_spent=0.1, next_sample=11)
    after, status = await _open(ctx, ws, ckpt, proposal)
    assert status == "opened"
    (oc,) = after.open
    _, plan = draw_plan(ctx.typed(), proposal, 5, first_sample=11, n_max=48)
    assert (oc.key, oc.base_version, oc.alpha, oc.n_max, oc.first_sample) == (5, "v0000", 0.05, 48, 11)
    assert oc.bundle_hash == proposal.bundle.bundle_hash
    assert oc.base_hash == scope_hash(ctx.typed(), initial, COUNTING_SKILL)
    assert (oc.target, oc.opened, oc.evidence_ids, oc.choice_detail) == (
        "skill:counting_problem",
        (2, 5),
        ["a", "b"],
        "ranked",
    )
    assert EditSet.model_validate_json(json.dumps(oc.edit_set)) == proposal.edit_set
    assert (oc.merged_with, oc.own_edit_set, oc.cursor, oc.observed) == ([], None, 0, [])
    assert (after.decision_index, after.gates_run, after.next_sample) == (6, 3, plan.samples_end(0))
    assert after.alpha_spent == pytest.approx(0.15)
    assert ctx.store.rows == []  # nothing decided, nothing drawn
    assert candidate_of(ctx.typed(), ws, oc).bundle.bundle_hash == proposal.bundle.bundle_hash


async def test_a_system_test_leaves_room_for_its_guard_and_a_second_gets_the_next_level(
    tmp_path: Path,
) -> None:
    ctx = FakeContext(gate={**SMALL, "alpha_spending": "basel", "guard_draws": 16})
    ws, initial = workspace(tmp_path)
    system = EditTarget.system()
    first = candidate(initial, system, patch(insert(system, anchor(initial, system), "look twice")))
    after, _ = await _open(ctx, ws, _ckpt(next_sample=3), first)
    _, plan = draw_plan(ctx.typed(), first, 0, first_sample=3, n_max=48)
    assert after.next_sample == plan.samples_end(16) == max(s for _, s in plan.draws) + 17
    second = line_candidate(initial, COUNTING_SKILL, "y")
    twice, _ = await _open(ctx, ws, after, second)
    levels = [gate_alpha(0.05, "basel", k) for k in (1, 2)]
    assert [o.alpha for o in twice.open] == levels
    assert twice.alpha_spent == pytest.approx(sum(levels))
    assert [o.first_sample for o in twice.open] == [3, after.next_sample]


async def test_the_same_bundle_is_not_opened_twice_for_its_target(tmp_path: Path) -> None:
    ctx = FakeContext(gate=SMALL)
    ws, initial = workspace(tmp_path)
    proposal = line_candidate(initial, COUNTING_SKILL, "x")
    opened, _ = await _open(ctx, ws, _ckpt(), proposal)
    again, status = await _open(ctx, ws, opened, proposal)
    assert (status, again) == ("duplicate", opened)
    other, status = await _open(ctx, ws, opened, line_candidate(initial, COUNTING_SKILL, "z"))
    assert (status, len(other.open)) == ("opened", 2)


async def test_a_refused_or_empty_reapply_is_decided_at_once_and_its_row_checked(tmp_path: Path) -> None:
    ctx = FakeContext(gate={**SMALL, "merge_open": False})
    ws, initial = workspace(tmp_path)
    rewrite = EditSet(skill_update_mode="rewrite", edits=(), body="Count twice.\n", rationale="r")
    proposal = candidate(initial, COUNTING_SKILL, rewrite)
    version = _accept(ws, proposal.bundle, COUNTING_SKILL)
    ckpt = _ckpt(decision_index=2, gates_run=1, alpha_spent=0.05, next_sample=9, version=version)
    checks: list[str] = []
    after, status = await _open(ctx, ws, ckpt, proposal, checks)
    assert status == "invalid"
    assert (after.decision_index, after.gates_run, after.alpha_spent, after.next_sample) == (3, 1, 0.05, 9)
    assert (after.open, after.round_closed) == ([], ["skill:counting_problem"])
    (row,) = ctx.store.of(GateDecisionRow)
    assert (row.gate_index, row.reason) == (2, "reject_invalid")
    assert row.detail == "no_change: the incumbent already holds this edit"
    assert checks == ["check"]  # the val score of its dual_metric row is checked against the budget
    gone = line_candidate(initial, COUNTING_SKILL, "x")  # its anchor is gone from the rewritten skill
    _, status = await _open(ctx, ws, ckpt, gone)
    last = ctx.store.of(GateDecisionRow)[-1]
    assert status == "invalid"
    assert last.detail == "anchor_absent: anchor not found in the body"


async def test_a_long_refusal_is_cut_to_300_characters_on_opening_and_on_rebase(tmp_path: Path) -> None:
    """A refusal names the bundle's folder when an edit empties the system prompt: a deep workspace
    makes that reason longer than the 300 characters a row and a checkpoint keep."""
    ctx = FakeContext(gate={**SMALL, "merge_open": False})
    ws, initial = workspace(tmp_path / ("deep" * 50))
    system = EditTarget.system()
    first, second = anchor(initial, system, 0), anchor(initial, system, 1)
    two_lines = EditSet(skill_update_mode="rewrite", edits=(), body=f"{first}\n{second}\n", rationale="r")
    short = candidate(initial, system, two_lines).bundle
    ckpt = _ckpt(version=_accept(ws, short, system))
    drop_first = patch(Edit(op=EditOp.DELETE, anchor=first, text=""))
    opened, status = await _open(ctx, ws, ckpt, candidate(ws.load(ckpt.version), system, drop_first))
    assert status == "opened"
    one_line = EditSet(skill_update_mode="rewrite", edits=(), body=f"{first}\n", rationale="r")
    moved = opened.model_copy(
        update={"version": _accept(ws, candidate(short, system, one_line).bundle, system)}
    )
    (invalid,) = rebase(ctx.typed(), ws, moved, moved.open[0]).open
    assert invalid.invalid.startswith("rebased onto v0002: malformed_edit: ")
    assert len(invalid.invalid) == 300
    emptying = Candidate(system, drop_first, short, "", "", choice="only")
    _, status = await _open(ctx, ws, moved, emptying)
    (row,) = ctx.store.of(GateDecisionRow)
    assert status == "invalid"
    assert row.detail.startswith("malformed_edit: ")
    assert len(row.detail) == 300


async def test_a_merged_set_refused_at_length_reopens_alone_with_the_reason_cut(tmp_path: Path) -> None:
    """The partner deletes one line, the proposal another; the next accept leaves only those two
    lines, so the merged set would empty the prompt (a long refusal) and the proposal alone does not."""
    ctx = FakeContext(gate=SMALL)
    ws, initial = workspace(tmp_path / ("deep" * 50))
    system = EditTarget.system()
    lines = [anchor(initial, system, k) for k in range(3)]
    three = EditSet(
        skill_update_mode="rewrite", edits=(), body="".join(f"{x}\n" for x in lines), rationale="r"
    )
    ckpt = _ckpt(version=_accept(ws, candidate(initial, system, three).bundle, system))
    incumbent = ws.load(ckpt.version)
    drop = [patch(Edit(op=EditOp.DELETE, anchor=x, text="")) for x in lines[:2]]
    opened, _ = await _open(ctx, ws, ckpt, candidate(incumbent, system, drop[0]))
    merged, _ = await _open(ctx, ws, opened, candidate(incumbent, system, drop[1]))
    partner, joined = merged.open
    assert joined.merged_with == [partner.key]
    two = EditSet(skill_update_mode="rewrite", edits=(), body=f"{lines[0]}\n{lines[1]}\n", rationale="r")
    moved = merged.model_copy(
        update={"version": _accept(ws, candidate(incumbent, system, two).bundle, system)}
    )
    alone = rebase(ctx.typed(), ws, moved, joined).open[1]
    assert alone.choice_detail.startswith("reopened alone: the merged set was refused (malformed_edit: ")
    assert len(alone.choice_detail) == 300
    assert (alone.merged_with, alone.invalid) == ([], "")
    assert EditSet.model_validate_json(json.dumps(alone.edit_set)) == drop[1]


async def test_a_test_that_could_never_accept_is_rejected_without_drawing(tmp_path: Path) -> None:
    """At temperature 0 five questions are five observations: too few to reach 1/alpha."""
    ctx = FakeContext(gate=SMALL, val={COUNTING: 5, "OCR Problems": 30}, temperature=0.0)
    ws, initial = workspace(tmp_path)
    after, status = await _open(
        ctx, ws, _ckpt(decision_index=4), line_candidate(initial, COUNTING_SKILL, "x")
    )
    assert status == "unreachable"
    assert (after.decision_index, after.gates_run, after.alpha_spent, after.open) == (5, 0, 0.0, [])
    (row,) = ctx.store.of(GateDecisionRow)
    assert (row.gate_index, row.reason, row.evidence["alpha"]) == (4, "reject_inertia", 0.05)
    assert "only 5 observations can be drawn (5 distinct val questions)" in row.detail
    _, status = await _open(ctx, ws, _ckpt(), line_candidate(initial, OCR_SKILL, "x"))
    assert status == "opened"


async def test_a_partner_that_adds_nothing_to_merge_leaves_the_proposal_alone(tmp_path: Path) -> None:
    """The open test holds the proposal's line already: the proposal opens alone, at the epoch end's
    cursor (no step)."""
    ctx = FakeContext(gate=SMALL)
    ws, initial = workspace(tmp_path)
    opened, _ = await _open(ctx, ws, _ckpt(), line_candidate(initial, COUNTING_SKILL, "same", nth=1))
    again = line_candidate(initial, COUNTING_SKILL, "same", nth=0)
    after, status = await open_candidate(
        ctx.typed(), ws, opened, again, cursor={"epoch": 3, "epoch_end": "x"}, check_stop=lambda: None
    )
    assert status == "opened"
    alone = after.open[1]
    assert (alone.merged_with, alone.own_edit_set, alone.opened) == ([], None, (3, -1))
    assert EditSet.model_validate_json(json.dumps(alone.edit_set)) == again.edit_set


async def test_a_proposal_joins_its_targets_open_test_as_a_merged_one(tmp_path: Path) -> None:
    ctx = FakeContext(gate=SMALL)
    ws, initial = workspace(tmp_path)
    first = line_candidate(initial, COUNTING_SKILL, "first", nth=1)
    opened, _ = await _open(ctx, ws, _ckpt(), first)
    second = line_candidate(initial, COUNTING_SKILL, "second", nth=0)
    merged, status = await _open(ctx, ws, opened, second)
    assert status == "opened"
    partner, joined = merged.open
    assert (joined.merged_with, joined.key) == ([partner.key], 1)
    assert EditSet.model_validate_json(json.dumps(joined.own_edit_set)) == second.edit_set
    assert EditSet.model_validate_json(json.dumps(joined.edit_set)).edits == (
        *first.edit_set.edits,
        *second.edit_set.edits,
    )


# --- candidate_of, is_stale --------------------------------------------------------------------


async def test_an_open_candidate_that_no_longer_rebuilds_is_an_error(tmp_path: Path) -> None:
    ctx = FakeContext(gate=SMALL)
    ws, initial = workspace(tmp_path)
    opened, _ = await _open(ctx, ws, _ckpt(), line_candidate(initial, COUNTING_SKILL, "x"))
    (oc,) = opened.open
    rebuilt = candidate_of(ctx.typed(), ws, oc.model_copy(update={"choice": "rank", "evidence_ids": ["q"]}))
    assert (rebuilt.choice, rebuilt.evidence_ids, rebuilt.document_before) == (
        "rank",
        frozenset({"q"}),
        initial.text_of(COUNTING_SKILL),
    )
    assert rebuilt.document_after == rebuilt.bundle.text_of(COUNTING_SKILL)
    with pytest.raises(GateError, match="no longer rebuilds from v0000") as caught:
        candidate_of(ctx.typed(), ws, oc.model_copy(update={"bundle_hash": "other"}))
    assert caught.value.context["gate_index"] == oc.key
    broken = oc.model_copy(
        update={"edit_set": json.loads(patch(insert(COUNTING_SKILL, LONG, "x")).model_dump_json())}
    )
    with pytest.raises(GateError):
        candidate_of(ctx.typed(), ws, broken)


async def test_a_test_is_stale_only_when_what_its_classes_see_changed(tmp_path: Path) -> None:
    ctx = FakeContext(gate=SMALL)
    ws, initial = workspace(tmp_path)
    opened, _ = await _open(ctx, ws, _ckpt(), line_candidate(initial, COUNTING_SKILL, "x"))
    system = EditTarget.system()
    sys_opened, _ = await _open(
        ctx, ws, _ckpt(), candidate(initial, system, patch(insert(system, anchor(initial, system), "y")))
    )
    counting, system_test = opened.open[0], sys_opened.open[0]
    assert False is is_stale(ctx.typed(), ws, _ckpt(), counting.model_copy(update={"base_hash": "bogus"}))
    untrained = line_candidate(initial, EditTarget.skill("Action Reasoning"), "z").bundle  # no val class
    v1 = _accept(ws, untrained, EditTarget.skill("Action Reasoning"))
    assert False is is_stale(ctx.typed(), ws, _ckpt(version=v1), counting)
    assert False is is_stale(ctx.typed(), ws, _ckpt(version=v1), system_test)
    v2 = _accept(ws, line_candidate(ws.load(v1), OCR_SKILL, "w").bundle, OCR_SKILL)
    assert False is is_stale(ctx.typed(), ws, _ckpt(version=v2), counting)
    assert is_stale(ctx.typed(), ws, _ckpt(version=v2), system_test)  # its guard sees OCR
    v3 = _accept(ws, line_candidate(ws.load(v2), COUNTING_SKILL, "v").bundle, COUNTING_SKILL)
    assert is_stale(ctx.typed(), ws, _ckpt(version=v3), counting)


# --- rebase ------------------------------------------------------------------------------------


async def _opened_then_moved(
    tmp_path: Path, proposal_lines: tuple[str, ...], moved: EditSet, **gate: Any
) -> tuple[FakeContext, Workspace, Checkpoint, OpenCandidate]:
    """A counting test opened on v0000 (with some evidence), then the counting skill moved to v0001."""
    ctx = FakeContext(gate={**SMALL, **gate})
    ws, initial = workspace(tmp_path)
    opened, _ = await _open(
        ctx, ws, _ckpt(gates_run=1), line_candidate(initial, COUNTING_SKILL, *proposal_lines)
    )
    oc = opened.open[0].model_copy(
        update={"cursor": 9, "observed": [1, -1, 0, 1], "stage_ends": [4], "infra": 5, "wealth": 2.5,
                "harm_wealth": 0.5, "rounds": 1, "rebased_from": [0]}
    )  # fmt: skip
    applied = initial.apply(COUNTING_SKILL, moved)
    assert isinstance(applied, Bundle), applied
    version = _accept(ws, applied, COUNTING_SKILL)
    other = OpenCandidate.model_validate({**oc.model_dump(), "key": 99, "target": "skill:ocr_problems"})
    ckpt = opened.model_copy(update={"open": [other, oc], "version": version, "next_sample": 70})
    return ctx, ws, ckpt, oc


async def test_a_rebase_restarts_the_test_from_nothing_with_a_new_index_level_and_samples(
    tmp_path: Path,
) -> None:
    moved = patch(
        insert(COUNTING_SKILL, anchor(workspace(tmp_path / "peek")[1], COUNTING_SKILL, 3), "landed")
    )
    ctx, ws, ckpt, oc = await _opened_then_moved(tmp_path, ("x",), moved, alpha_spending="basel")
    after = rebase(ctx.typed(), ws, ckpt, oc)
    other, new = after.open
    assert other == ckpt.open[0]
    assert (new.key, new.base_version, new.first_sample) == (ckpt.decision_index, "v0001", 70)
    assert (new.cursor, new.observed, new.stage_ends, new.infra) == (0, [], [], 0)
    assert (new.wealth, new.harm_wealth, new.rounds, new.rebased_from) == (1.0, 1.0, 0, [0, oc.key])
    assert new.alpha == gate_alpha(0.05, "basel", ckpt.gates_run + 1)
    assert new.base_hash == scope_hash(ctx.typed(), ws.load("v0001"), COUNTING_SKILL)
    assert candidate_of(ctx.typed(), ws, new).bundle.bundle_hash == new.bundle_hash
    assert "landed" in ws.load("v0001").skill(COUNTING).body
    assert (after.decision_index, after.gates_run) == (ckpt.decision_index + 1, ckpt.gates_run + 1)
    assert after.alpha_spent == pytest.approx(ckpt.alpha_spent + new.alpha)
    assert after.next_sample > 70


async def test_a_rebase_of_edits_that_landed_or_no_longer_apply_marks_the_test_invalid(
    tmp_path: Path,
) -> None:
    initial = workspace(tmp_path / "peek")[1]
    own = patch(insert(COUNTING_SKILL, anchor(initial, COUNTING_SKILL), "x"))
    ctx, ws, ckpt, oc = await _opened_then_moved(tmp_path / "landed", ("x",), own)
    after = rebase(ctx.typed(), ws, ckpt, oc)
    assert after.open[1] == oc.model_copy(update={"invalid": "rebased onto v0001: its edits already landed"})
    assert (after.decision_index, after.gates_run, after.alpha_spent) == (
        ckpt.decision_index,
        ckpt.gates_run,
        ckpt.alpha_spent,
    )
    rewrite = EditSet(skill_update_mode="rewrite", edits=(), body=LONG + "\n", rationale="r")
    ctx, ws, ckpt, oc = await _opened_then_moved(tmp_path / "gone", ("x",), rewrite)
    invalid = rebase(ctx.typed(), ws, ckpt, oc).open[1].invalid
    assert invalid == "rebased onto v0001: anchor_absent: anchor not found in the body"


async def test_a_rewrite_the_new_incumbent_already_holds_is_invalid(tmp_path: Path) -> None:
    ctx = FakeContext(gate=SMALL)
    ws, initial = workspace(tmp_path)
    rewrite = EditSet(skill_update_mode="rewrite", edits=(), body="Count twice.\n", rationale="r")
    opened, _ = await _open(ctx, ws, _ckpt(), candidate(initial, COUNTING_SKILL, rewrite))
    applied = initial.apply(COUNTING_SKILL, rewrite)
    assert isinstance(applied, Bundle)
    ckpt = opened.model_copy(update={"version": _accept(ws, applied, COUNTING_SKILL)})
    (invalid,) = rebase(ctx.typed(), ws, ckpt, ckpt.open[0]).open
    assert invalid.invalid == "rebased onto v0001: no_change: the new incumbent already holds this edit"


async def test_a_rebase_out_of_reach_of_the_next_level_is_invalid(tmp_path: Path) -> None:
    initial = workspace(tmp_path / "peek")[1]
    moved = patch(insert(COUNTING_SKILL, anchor(initial, COUNTING_SKILL, 3), "landed"))
    ctx, ws, ckpt, oc = await _opened_then_moved(tmp_path, ("x",), moved, alpha_spending="geometric")
    far = ckpt.model_copy(update={"gates_run": 40})
    (_, invalid) = rebase(ctx.typed(), ws, far, oc).open
    assert invalid.invalid.startswith("rebased onto v0001: unreachable at gate 41 (alpha ")
    assert rebase(ctx.typed(), ws, ckpt, oc).open[1].invalid == ""


async def test_a_merged_set_refused_on_rebase_reopens_as_its_own_proposal(tmp_path: Path) -> None:
    ctx = FakeContext(gate=SMALL)
    ws, initial = workspace(tmp_path)
    theirs = line_candidate(initial, COUNTING_SKILL, "theirs", nth=2)
    opened, _ = await _open(ctx, ws, _ckpt(), theirs)
    mine = line_candidate(initial, COUNTING_SKILL, "mine", nth=0)
    merged, _ = await _open(ctx, ws, opened, mine)
    partner, joined = merged.open
    # The partner's anchor is gone from the new incumbent (a long line, so the reason is cut).
    body = initial.skill(COUNTING).body.replace(anchor(initial, COUNTING_SKILL, 2), LONG)
    rewrite = EditSet(skill_update_mode="rewrite", edits=(), body=body, rationale="r")
    applied = initial.apply(COUNTING_SKILL, rewrite)
    assert isinstance(applied, Bundle), applied
    ckpt = merged.model_copy(update={"version": _accept(ws, applied, COUNTING_SKILL)})
    after = rebase(ctx.typed(), ws, ckpt, joined)
    alone = after.open[1]
    assert (alone.merged_with, alone.own_edit_set, alone.invalid) == ([], None, "")
    assert EditSet.model_validate_json(json.dumps(alone.edit_set)) == mine.edit_set
    assert alone.choice_detail == (
        "reopened alone: the merged set was refused (anchor_absent: anchor not found in the body)"
    )
    assert (alone.key, alone.rebased_from) == (ckpt.decision_index, [joined.key])
    # Its own edits refused too: invalid, as any test whose re-apply is refused.
    lost = joined.model_copy(
        update={
            "own_edit_set": json.loads(patch(insert(COUNTING_SKILL, "no such line", "m")).model_dump_json())
        }
    )
    refused = rebase(ctx.typed(), ws, ckpt.model_copy(update={"open": [partner, lost]}), lost).open[1]
    assert refused.invalid == "rebased onto v0001: anchor_absent: anchor not found in the body"
    assert (refused.merged_with, refused.key) == ([partner.key], joined.key)
    # A set that is not merged is never reopened from an own set it may still carry.
    single = joined.model_copy(update={"merged_with": []})
    assert (
        rebase(ctx.typed(), ws, ckpt.model_copy(update={"open": [partner, single]}), single).open[1].invalid
    )


# --- shared incumbent samples (train.gate.share_incumbent) ---------------------------------------


async def test_tests_of_one_target_and_incumbent_share_one_plan_when_sharing(tmp_path: Path) -> None:
    ctx = FakeContext(gate={**SMALL, "share_incumbent": True})
    ws, initial = workspace(tmp_path)
    first, _ = await _open(ctx, ws, _ckpt(next_sample=5), line_candidate(initial, COUNTING_SKILL, "x"))
    second, _ = await _open(ctx, ws, first, line_candidate(initial, COUNTING_SKILL, "y"))
    ocr, _ = await _open(ctx, ws, second, line_candidate(initial, OCR_SKILL, "z"))
    a, b, c = ocr.open
    assert (a.first_sample, a.plan_key, b.first_sample, b.plan_key) == (5, 5, 5, 5)
    plans = [
        draw_plan(ctx.typed(), candidate_of(ctx.typed(), ws, o), o.key, first_sample=o.first_sample,
                  n_max=o.n_max, plan_key=o.plan_key)[1].draws
        for o in (a, b)
    ]  # fmt: skip
    assert [(q.question_id, s) for q, s in plans[0]] == [(q.question_id, s) for q, s in plans[1]]
    # Another target has its own plan, started past every sample the counting plan may use.
    assert c.first_sample == c.plan_key == first.next_sample > 5
    assert ocr.sample_starts == {
        "skill:counting_problem": (a.base_hash, 5),
        "skill:ocr_problems": (c.base_hash, c.first_sample),
    }
    # Off (the default), every test starts past the last one: nothing is shared.
    plain = FakeContext(gate=SMALL)
    one, _ = await _open(plain, ws, _ckpt(next_sample=5), line_candidate(initial, COUNTING_SKILL, "x"))
    two, _ = await _open(plain, ws, one, line_candidate(initial, COUNTING_SKILL, "y"))
    assert [(o.first_sample, o.plan_key) for o in two.open] == [(5, None), (one.next_sample, None)]
    assert two.sample_starts == {}


async def test_an_accept_starts_the_targets_it_changed_on_fresh_samples(tmp_path: Path) -> None:
    ctx = FakeContext(gate={**SMALL, "share_incumbent": True})
    ws, initial = workspace(tmp_path)
    opened, _ = await _open(ctx, ws, _ckpt(next_sample=5), line_candidate(initial, COUNTING_SKILL, "x"))
    opened, _ = await _open(ctx, ws, opened, line_candidate(initial, OCR_SKILL, "z"))
    v1 = _accept(ws, line_candidate(initial, COUNTING_SKILL, "q").bundle, COUNTING_SKILL)
    kept = retire_sample_starts(ctx.typed(), opened, ws.load(v1))
    assert set(kept.sample_starts) == {"skill:ocr_problems"}  # its class's text did not move
    moved = kept.model_copy(update={"version": v1})
    after, _ = await _open(ctx, ws, moved, line_candidate(ws.load(v1), COUNTING_SKILL, "y"))
    assert after.open[-1].first_sample == moved.next_sample > opened.open[0].first_sample
    # A rebase onto the new incumbent starts there too, never on the accepted candidate's samples.
    rebased = rebase(ctx.typed(), ws, moved, opened.open[0])
    assert (rebased.open[0].first_sample, rebased.open[0].invalid) == (moved.next_sample, "")
    # A system accept changes what every class sees: no plan survives it.
    system = EditTarget.system()
    edited = candidate(ws.load(v1), system, patch(insert(system, anchor(initial, system), "w")))
    v2 = _accept(ws, edited.bundle, system)
    assert retire_sample_starts(ctx.typed(), after, ws.load(v2)).sample_starts == {}


@pytest.mark.parametrize("sizing", ["per_part", "one"])
async def test_a_merged_set_is_sized_for_the_effect_of_each_proposal_it_carries(
    tmp_path: Path, sizing: str
) -> None:
    """Per part, a set of two proposals is sized for twice ``min_effect`` (about a quarter of the
    draws), a set of three for three times; once its partner's edits landed, for one again."""
    ctx = FakeContext(gate={**SMALL, "n_max": 5000, "min_effect": 0.15, "merge_sizing": sizing})
    ws, initial = workspace(tmp_path)
    first = line_candidate(initial, COUNTING_SKILL, "first", nth=1)
    ckpt, _ = await _open(ctx, ws, _ckpt(), first)
    ckpt, _ = await _open(ctx, ws, ckpt, line_candidate(initial, COUNTING_SKILL, "second", nth=0))
    leading = ckpt.open[1].model_copy(update={"wealth": 1.5})  # the third joins the strongest test
    ckpt = ckpt.model_copy(update={"open": [ckpt.open[0], leading]})
    ckpt, _ = await _open(ctx, ws, ckpt, line_candidate(initial, COUNTING_SKILL, "third", nth=2))
    alone, two, three = ckpt.open
    assert (alone.parts, two.parts, three.parts) == (1, 2, 3)
    assert (two.merged_with, three.merged_with) == ([alone.key], [two.key])
    if sizing == "one":
        assert alone.n_max == two.n_max == three.n_max
    else:
        assert 3 * two.n_max < alone.n_max < 5 * two.n_max
        assert three.n_max < two.n_max
    moved = ckpt.model_copy(
        update={"version": _accept(ws, candidate_of(ctx.typed(), ws, alone).bundle, COUNTING_SKILL)}
    )
    rebased = rebase(ctx.typed(), ws, moved, two).open[1]
    assert (rebased.parts, rebased.n_max) == (1, alone.n_max)
