"""A decision's bookkeeping, at its seams: the gate (``validate``) is replaced by a stub returning a
chosen outcome, and the context by :class:`unit_support.FakeContext`, so each test runs in
milliseconds. The end-to-end decisions over a simulator are in test_dual_metric.py and test_validate.py."""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

import pytest
from unit_support import (
    COUNTING,
    COUNTING_SKILL,
    OCR,
    OCR_SKILL,
    FakeContext,
    line_candidate,
    never,
    workspace,
)

from skillharness.data import Question
from skillharness.skills import Bundle, EditRecord, EditSet, EditTarget, VersionReason
from skillharness.store import DualMetricRow, GateDecisionRow
from skillharness.train.evolve.proposer import EvolveRefusal
from skillharness.train.gate import Decision, DecisionKind, gate_alpha, min_wins
from skillharness.train.gate.power import measured_discordance, sized_draws
from skillharness.train.gate.reachability import threshold
from skillharness.train.loop.decide import (
    commit_or_adopt,
    decide,
    record_decision,
    record_dual_metric,
    sized_n_max,
    task_type_of_target,
)
from skillharness.train.loop.progress import decision_counts
from skillharness.train.state.budget import TrainingStopped
from skillharness.train.state.checkpoint import Checkpoint
from skillharness.train.state.records import (
    BEFORE_TESTING,
    Candidate,
    GateOutcome,
    GateReason,
    Refused,
    Standing,
    decision_label,
)

# The module, not the function of the same name the package exports: the gate is patched there.
decide_module = importlib.import_module("skillharness.train.loop.decide")
CURSOR = {"epoch": 2, "step": 3, "target": 1}


def _ckpt(**update: Any) -> Checkpoint:
    return Checkpoint(run_id="t-unit", baseline_run_id="t-unit.baseline").model_copy(update=update)


def _decision(kind: DecisionKind, *, n: int = 30, wins: int = 12, losses: int = 2) -> Decision:
    return Decision(kind, 25.0, 1.0, 20.0, n, wins, losses, n - wins - losses, 0, 3, 0)


ACCEPT = GateOutcome(
    GateReason.ACCEPT,
    "crossed",
    _decision(DecisionKind.ACCEPT),
    alpha=0.05,
    guard={"cleared": True},
    evidence={"samples": [1, 40]},
)
REJECT = GateOutcome(
    GateReason.REJECT_EVIDENCE,
    "harm shown",
    _decision(DecisionKind.REJECT_EVIDENCE, wins=2, losses=12),
    alpha=0.05,
    evidence={"samples": [1, 33]},
)


class _Gate:
    """Stands in for ``validate``: answers ``outcome`` and keeps what it was asked."""

    def __init__(self, outcome: GateOutcome) -> None:
        self.outcome = outcome
        self.asked: list[dict[str, Any]] = []

    async def __call__(self, ctx: object, incumbent: Bundle, proposal: Candidate, **kw: Any) -> GateOutcome:
        self.asked.append({"incumbent": incumbent, "proposal": proposal, **kw})
        return self.outcome


@pytest.fixture
def gate(monkeypatch: pytest.MonkeyPatch) -> _Gate:
    stub = _Gate(ACCEPT)
    monkeypatch.setattr(decide_module, "validate", stub)
    return stub


def _right_unless_counting_edited(bundle: Bundle, question: Question) -> bool:
    """Every answer right, but counting ones wrong once the counting skill holds an added line."""
    return question.task_type != COUNTING or "- added" not in bundle.skill(COUNTING).body


# --- task_type_of_target, commit_or_adopt ------------------------------------------------------


def test_a_skill_target_names_its_trained_class_and_nothing_else_names_one() -> None:
    ctx = FakeContext().typed()
    assert task_type_of_target(ctx, COUNTING_SKILL) == COUNTING
    assert task_type_of_target(ctx, OCR_SKILL) == OCR
    assert task_type_of_target(ctx, EditTarget.skill("Action Reasoning")) is None  # not trained
    assert task_type_of_target(ctx, EditTarget.system()) is None
    assert task_type_of_target(ctx, EditTarget.tool("get_frames")) is None


def test_a_version_made_at_a_cursor_is_adopted_not_committed_twice(tmp_path: Path) -> None:
    ws, initial = workspace(tmp_path)
    edited = line_candidate(initial, COUNTING_SKILL, "count twice").bundle
    record = EditRecord(target=COUNTING_SKILL, reason=VersionReason.ACCEPTED, details={"why": "test"})
    made = commit_or_adopt(ws, edited, "v0000", CURSOR, record)
    assert made == "v0001"
    assert ws.record(made).edit.details == {"why": "test", "cursor": CURSOR}
    ws.revert("v0000")  # a crash after the commit, and a resume whose checkpoint names v0000
    again = commit_or_adopt(ws, edited, "v0000", dict(CURSOR), record)
    assert (again, ws.current_version, len(ws.history())) == ("v0001", "v0001", 2)
    other = commit_or_adopt(ws, edited, "v0001", {**CURSOR, "target": 2}, record)
    assert (other, ws.current_version, len(ws.history())) == ("v0002", "v0002", 3)
    assert commit_or_adopt(ws, edited, "v0000", CURSOR, record) == "v0001"
    assert ws.current_version == "v0001"


# --- decide: its outcomes ----------------------------------------------------------------------


async def test_a_refusal_is_decided_invalid_without_a_gate(tmp_path: Path, gate: _Gate) -> None:
    ctx = FakeContext()
    ws, _ = workspace(tmp_path)
    edits = EditSet(skill_update_mode="patch", edits=(), rationale="why not")
    refused = Refused(COUNTING_SKILL, "no_edits", "x" * 400, edits, "the document")
    ckpt = _ckpt(decision_index=4, gates_run=2, alpha_spent=0.1, next_sample=9)
    after = await decide(ctx.typed(), ws, ckpt, refused, cursor=CURSOR, check_stop=never)
    assert gate.asked == []
    assert (after.decision_index, after.gates_run, after.alpha_spent, after.next_sample) == (5, 2, 0.1, 9)
    assert (after.version, after.accepts) == ("v0000", 0)
    (row,) = ctx.store.of(GateDecisionRow)
    assert (row.gate_index, row.reason, row.epoch, row.step, row.target) == (
        4,
        "reject_invalid",
        2,
        3,
        "skill:counting_problem",
    )
    assert row.detail == f"no_edits: {'x' * 400}"[:300]
    assert (row.version_before, row.version_after, row.document_after) == ("v0000", None, None)
    assert (row.rationale, row.document_before) == ("why not", "the document")
    assert row.evidence == {"alpha": 0.0, "guard": None, BEFORE_TESTING: "no_edits", "evolve_calls": 0}
    (memo,) = after.rejected["skill:counting_problem"]
    assert memo.standing is Standing.INVALID
    assert after.accepted_this_epoch == {}


async def test_an_accept_commits_counts_and_records_the_version_that_stands(
    tmp_path: Path, gate: _Gate
) -> None:
    ctx = FakeContext(right=_right_unless_counting_edited)
    ws, initial = workspace(tmp_path)
    proposal = line_candidate(initial, COUNTING_SKILL, "added", "café au lait")
    ckpt = _ckpt(decision_index=3, gates_run=1, alpha_spent=0.05, next_sample=7, accepts=1, discordance={})
    after = await decide(ctx.typed(), ws, ckpt, proposal, cursor=CURSOR, check_stop=never)
    (asked,) = gate.asked
    assert (asked["gate_index"], asked["first_sample"], asked["alpha"]) == (3, 7, 0.05)
    assert asked["n_max"] == sized_n_max(ctx.typed(), ckpt, (COUNTING,))
    assert asked["check_stop"] is never
    assert (after.decision_index, after.gates_run, after.accepts, after.next_sample) == (4, 2, 2, 40)
    assert after.alpha_spent == pytest.approx(0.1)
    assert after.version == "v0001" == ws.current_version
    assert ws.load("v0001").bundle_hash == proposal.bundle.bundle_hash
    assert ws.record("v0001").edit.details["cursor"] == CURSOR
    (row,) = ctx.store.of(GateDecisionRow)
    assert (row.reason, row.version_before, row.version_after) == ("accept", "v0000", "v0001")
    assert row.evidence["decision"]["kind"] == DecisionKind.ACCEPT.label
    assert (row.evidence["choice"], row.evidence["guard"], row.evidence["alpha"]) == (
        "only",
        {"cleared": True},
        0.05,
    )
    assert row.edits == proposal.edit_set.model_dump(mode="json")
    assert row.document_after == proposal.document_after
    (kept,) = after.accepted_this_epoch["skill:counting_problem"]
    assert (kept.target, kept.rationale) == ("skill:counting_problem", "test")
    # Shown to slow momentum as written: keys sorted, text as the model wrote it (no \u escapes).
    assert kept.edits_json == json.dumps(
        proposal.edit_set.model_dump(mode="json"), ensure_ascii=False, sort_keys=True
    )
    assert "café" in kept.edits_json
    assert kept.edits_json.index('"body"') < kept.edits_json.index('"skill_update_mode"')
    assert after.rejected == {}
    (metric,) = ctx.store.of(DualMetricRow)
    # The accepted version's numbers: its counting answers are all wrong, the OCR ones right.
    assert (metric.version, metric.target_correct, metric.target_n, metric.val_correct, metric.val_n) == (
        "v0001",
        0,
        30,
        30,
        60,
    )


async def test_a_rejection_draws_spends_and_is_remembered_but_commits_nothing(
    tmp_path: Path, gate: _Gate
) -> None:
    gate.outcome = REJECT
    ctx = FakeContext()
    ws, initial = workspace(tmp_path)
    proposal = line_candidate(initial, COUNTING_SKILL, "added")
    ckpt = _ckpt(decision_index=3, gates_run=1, alpha_spent=0.05, next_sample=50)
    after = await decide(ctx.typed(), ws, ckpt, proposal, cursor=CURSOR, check_stop=never)
    # A gate that planned fewer samples than the run has used never moves the counter back.
    assert (after.decision_index, after.gates_run, after.accepts, after.next_sample) == (4, 2, 0, 50)
    assert after.alpha_spent == pytest.approx(0.1)
    assert (after.version, len(ws.history())) == ("v0000", 1)
    (memo,) = after.rejected["skill:counting_problem"]
    assert (memo.standing, memo.wins, memo.losses) == (Standing.HARMFUL, 2, 12)
    (row,) = ctx.store.of(GateDecisionRow)
    assert (row.reason, row.version_after) == ("reject_evidence", None)


async def test_an_outcome_that_drew_nothing_spends_no_level(tmp_path: Path, gate: _Gate) -> None:
    gate.outcome = GateOutcome(GateReason.REJECT_INERTIA, "unreachable", alpha=0.05)
    ctx = FakeContext()
    ws, initial = workspace(tmp_path)
    ckpt = _ckpt(gates_run=1, alpha_spent=0.05, next_sample=5)
    after = await decide(
        ctx.typed(), ws, ckpt, line_candidate(initial, COUNTING_SKILL, "x"), cursor=CURSOR, check_stop=never
    )
    assert (after.decision_index, after.gates_run, after.alpha_spent, after.next_sample) == (1, 1, 0.05, 5)


async def test_the_gate_spends_the_level_of_the_runs_next_test(tmp_path: Path, gate: _Gate) -> None:
    ctx = FakeContext(gate={"alpha_spending": "elond"})
    ws, initial = workspace(tmp_path)
    ckpt = _ckpt(gates_run=4, accepts=2)
    gate.outcome = GateOutcome(
        GateReason.REJECT_INERTIA, "", _decision(DecisionKind.REJECT_INERTIA), alpha=0.01
    )
    after = await decide(
        ctx.typed(), ws, ckpt, line_candidate(initial, COUNTING_SKILL, "x"), cursor=CURSOR, check_stop=never
    )
    level = gate_alpha(0.05, "elond", 5, accepts=2)
    assert gate.asked[0]["alpha"] == pytest.approx(level)
    assert after.alpha_spent == pytest.approx(level)


async def test_a_proposal_is_gated_as_reapplied_to_the_incumbent_of_the_moment(
    tmp_path: Path, gate: _Gate
) -> None:
    """Built on v0000, decided after an OCR accept made v0001: the gate sees the counting edit on v0001."""
    ctx = FakeContext()
    ws, initial = workspace(tmp_path)
    proposal = line_candidate(initial, COUNTING_SKILL, "added")
    ocr = line_candidate(initial, OCR_SKILL, "read slowly").bundle
    ws.commit(ocr, "v0000", EditRecord(target=OCR_SKILL, reason=VersionReason.ACCEPTED))
    after = await decide(ctx.typed(), ws, _ckpt(version="v0001"), proposal, cursor=CURSOR, check_stop=never)
    gated = gate.asked[0]["proposal"]
    expected = ws.load("v0001").apply(COUNTING_SKILL, proposal.edit_set)
    assert isinstance(expected, Bundle)
    assert gated.bundle.bundle_hash == expected.bundle_hash == ws.load(after.version).bundle_hash
    assert gate.asked[0]["incumbent"].bundle_hash == ws.load("v0001").bundle_hash
    assert (gated.document_before, gated.document_after) == (
        ws.load("v0001").text_of(COUNTING_SKILL),
        expected.text_of(COUNTING_SKILL),
    )
    assert "read slowly" in ws.load(after.version).skill(OCR).body  # the OCR accept stands


async def test_a_whole_update_is_gated_as_built_and_one_unchanged_is_not_rebuilt(
    tmp_path: Path, gate: _Gate
) -> None:
    ctx = FakeContext()
    ws, initial = workspace(tmp_path)
    built = line_candidate(initial, COUNTING_SKILL, "added")
    whole = Candidate(
        built.target, EditSet(skill_update_mode="patch", edits=(), rationale="m"), built.bundle, "a", "b",
        choice="momentum", reapply=False,
    )  # fmt: skip
    await decide(ctx.typed(), ws, _ckpt(), whole, cursor={"epoch": 2, "epoch_end": "x"}, check_stop=never)
    assert gate.asked[-1]["proposal"] is whole
    (row,) = ctx.store.of(GateDecisionRow)
    assert (row.epoch, row.step) == (2, -1)  # an epoch-end decision has no step
    # An edit set whose bundle is already the incumbent's is not re-applied (it would say no_change).
    same = Candidate(COUNTING_SKILL, built.edit_set, initial, "a", "b", choice="only")
    await decide(ctx.typed(), ws, _ckpt(), same, cursor={**CURSOR, "target": 2}, check_stop=never)
    assert gate.asked[-1]["proposal"] is same


async def test_a_reapply_the_new_incumbent_refuses_is_decided_invalid(tmp_path: Path, gate: _Gate) -> None:
    ctx = FakeContext()
    ws, initial = workspace(tmp_path)
    proposal = line_candidate(initial, COUNTING_SKILL, "added")
    # The new incumbent rewrote the counting skill: the proposal's anchor is gone.
    rewrite = EditSet(skill_update_mode="rewrite", edits=(), body="Count.\n", rationale="r")
    moved = initial.apply(COUNTING_SKILL, rewrite)
    assert isinstance(moved, Bundle)
    ws.commit(moved, "v0000", EditRecord(target=COUNTING_SKILL, reason=VersionReason.ACCEPTED))
    after = await decide(ctx.typed(), ws, _ckpt(version="v0001"), proposal, cursor=CURSOR, check_stop=never)
    assert gate.asked == []
    (row,) = ctx.store.of(GateDecisionRow)
    assert row.reason == "reject_invalid"
    assert row.detail.startswith("anchor_")
    assert row.document_after is None
    assert after.rejected["skill:counting_problem"][0].standing is Standing.INVALID
    # Never tested: the row says so, and people see it apart from the decided tests.
    assert row.evidence[BEFORE_TESTING] == "anchor_absent"
    assert decision_label(row.reason, row.evidence) == "refused before testing"


async def test_a_rank_decline_is_stored_invalid_and_shown_as_a_decline(tmp_path: Path, gate: _Gate) -> None:
    """Issue 49 item 6: a rank decline read as ``reject_invalid``; it is a proposal never tested."""
    ctx = FakeContext()
    ws, initial = workspace(tmp_path)
    declined = Refused(COUNTING_SKILL, EvolveRefusal.RANK_DECLINED, "generic advice", calls=4)
    await decide(ctx.typed(), ws, _ckpt(), declined, cursor=CURSOR, check_stop=never)
    tested = line_candidate(initial, COUNTING_SKILL, "added")
    gate.outcome = REJECT
    await decide(ctx.typed(), ws, _ckpt(), tested, cursor={**CURSOR, "target": 2}, check_stop=never)
    rows = ctx.store.of(GateDecisionRow)
    assert [decision_label(r.reason, r.evidence) for r in rows] == ["declined by rank", "reject_evidence"]
    assert decision_counts(rows) == "reject_evidence 1; not tested: declined by rank 1 (4 evolve calls)"


# --- record_decision and the dual_metric row ---------------------------------------------------


async def test_a_rejection_is_recorded_as_it_was_tested_not_rebased(tmp_path: Path) -> None:
    """Only an accept is re-applied to the incumbent of the moment (it is committed there); a
    rejection's row keeps the documents its test compared."""
    ctx = FakeContext()
    ws, initial = workspace(tmp_path)
    proposal = line_candidate(initial, COUNTING_SKILL, "added")
    moved = line_candidate(initial, COUNTING_SKILL, "other", nth=2).bundle
    ws.commit(moved, "v0000", EditRecord(target=COUNTING_SKILL, reason=VersionReason.ACCEPTED))
    after = await record_decision(
        ctx.typed(),
        ws,
        _ckpt(version="v0001"),
        proposal,
        REJECT,
        cursor=CURSOR,
        gate_index=0,
        check_stop=never,
    )
    (row,) = ctx.store.of(GateDecisionRow)
    assert (row.document_before, row.document_after) == (proposal.document_before, proposal.document_after)
    assert (after.version, len(ws.history())) == ("v0001", 2)


async def test_an_accept_recorded_after_another_moved_the_incumbent_commits_the_rebased_bundle(
    tmp_path: Path,
) -> None:
    ctx = FakeContext()
    ws, initial = workspace(tmp_path)
    proposal = line_candidate(initial, COUNTING_SKILL, "added")
    ocr = line_candidate(initial, OCR_SKILL, "read slowly").bundle
    ws.commit(ocr, "v0000", EditRecord(target=OCR_SKILL, reason=VersionReason.ACCEPTED))
    after = await record_decision(
        ctx.typed(),
        ws,
        _ckpt(version="v0001"),
        proposal,
        ACCEPT,
        cursor=CURSOR,
        gate_index=0,
        check_stop=never,
    )
    stands = ws.load(after.version)
    assert after.version == "v0002"
    assert "added" in stands.skill(COUNTING).body
    assert "read slowly" in stands.skill(OCR).body
    (row,) = ctx.store.of(GateDecisionRow)
    assert row.document_before == ws.load("v0001").text_of(COUNTING_SKILL)


def _half_of_counting(bundle: Bundle, question: Question) -> bool:
    """Every OCR answer right, every other counting answer (15 of 30)."""
    return question.task_type != COUNTING or int(question.question_id[-5:-2]) % 2 == 0


async def test_the_dual_metric_row_holds_the_targets_class_all_val_and_the_ema(tmp_path: Path) -> None:
    ctx = FakeContext(train={"ema_gamma": 0.25}, right=_half_of_counting)
    ws, _ = workspace(tmp_path)
    ckpt = _ckpt(ema={COUNTING: 0.9})
    after = await record_dual_metric(
        ctx.typed(), ws, ckpt, COUNTING_SKILL, {"epoch": 1, "epoch_end": "x"}, never
    )
    (row,) = ctx.store.of(DualMetricRow)
    assert (row.epoch, row.step, row.target, row.version) == (1, -1, "skill:counting_problem", "v0000")
    assert (row.target_correct, row.target_n, row.val_correct, row.val_n) == (15, 30, 45, 60)
    # A class seen before moves by gamma toward today's accuracy; a new one starts at it.
    assert row.ema == after.ema == {COUNTING: pytest.approx(0.25 * 0.5 + 0.75 * 0.9), OCR: 1.0}
    system = await record_dual_metric(ctx.typed(), ws, after, EditTarget.system(), CURSOR, never)
    last = ctx.store.of(DualMetricRow)[-1]
    assert (last.step, last.target, last.target_correct, last.target_n) == (3, "system", 45, 60)
    assert system.ema == {COUNTING: pytest.approx(0.25 * 0.5 + 0.75 * 0.8), OCR: 1.0}


async def test_a_trained_class_without_val_questions_has_no_target_numbers(tmp_path: Path) -> None:
    ctx = FakeContext(val={OCR: 10})
    ws, _ = workspace(tmp_path)
    after = await record_dual_metric(ctx.typed(), ws, _ckpt(), COUNTING_SKILL, CURSOR, never)
    (row,) = ctx.store.of(DualMetricRow)
    assert (row.target_correct, row.target_n, row.val_correct, row.val_n) == (0, 0, 10, 10)
    assert after.ema == {COUNTING: 0.0, OCR: 1.0}


async def test_the_val_score_after_an_accept_is_checked_before_and_asked_in_stages(tmp_path: Path) -> None:
    """Issue: the version an accept makes is scored on the whole val pool; the budget is checked
    before that rollout and handed to it (asked a stage at a time, checked between)."""
    ctx = FakeContext()
    ws, initial = workspace(tmp_path)
    proposal = line_candidate(initial, COUNTING_SKILL, "added")
    checks: list[int] = []

    def check() -> None:
        checks.append(len(ctx.rollouts))

    after = await record_decision(
        ctx.typed(), ws, _ckpt(), proposal, ACCEPT, cursor=CURSOR, gate_index=0, check_stop=check
    )
    assert checks[0] == 0  # before the val rollout
    (call,) = ctx.rollouts
    assert (call.bundle_hash, call.draws, call.check_stop) == (ws.load(after.version).bundle_hash, 60, check)


async def test_a_budget_stop_at_that_val_score_resumes_to_the_same_decision(tmp_path: Path) -> None:
    """A stop before the val score leaves the checkpoint saved before the decision; the resume
    decides again, adopts the version already committed, and ends where an unstopped run ends."""

    def stop() -> None:
        raise TrainingStopped("call budget reached", reason="max_calls")

    whole_ctx, cut_ctx = FakeContext(), FakeContext()
    whole_ws, initial = workspace(tmp_path / "whole")
    cut_ws, _ = workspace(tmp_path / "cut")
    proposal = line_candidate(initial, COUNTING_SKILL, "added")
    saved = _ckpt(decision_index=1)
    whole = await record_decision(
        whole_ctx.typed(), whole_ws, saved, proposal, ACCEPT, cursor=CURSOR, gate_index=0, check_stop=never
    )
    with pytest.raises(TrainingStopped):
        await record_decision(
            cut_ctx.typed(), cut_ws, saved, proposal, ACCEPT, cursor=CURSOR, gate_index=0, check_stop=stop
        )
    assert cut_ctx.rollouts == []
    assert cut_ctx.store.of(DualMetricRow) == []
    resumed = await record_decision(
        cut_ctx.typed(), cut_ws, saved, proposal, ACCEPT, cursor=CURSOR, gate_index=0, check_stop=never
    )
    assert len(cut_ws.history()) == 2
    assert resumed == whole
    assert [r.model_dump(exclude={"created_at"}) for r in cut_ctx.store.of(DualMetricRow)] == [
        r.model_dump(exclude={"created_at"}) for r in whole_ctx.store.of(DualMetricRow)
    ]


async def test_the_val_score_of_a_rejection_is_checked_too(tmp_path: Path) -> None:
    """A rejection's row scores the standing version (read back, usually): checked all the same."""
    ctx = FakeContext()
    ws, initial = workspace(tmp_path)
    checked: list[str] = []
    await record_decision(
        ctx.typed(),
        ws,
        _ckpt(),
        line_candidate(initial, COUNTING_SKILL, "added"),
        REJECT,
        cursor=CURSOR,
        gate_index=0,
        check_stop=lambda: checked.append("check"),
    )
    assert checked == ["check"]
    assert ctx.rollouts[0].bundle_hash == ws.load("v0000").bundle_hash


# --- sized_n_max -------------------------------------------------------------------------------


def test_a_test_is_sized_from_the_measured_discordance_and_capped() -> None:
    ctx = FakeContext(gate={"n_max": 1024, "first_stage": 8, "min_effect": 0.1})
    counts = {COUNTING: [6, 40], OCR: [30, 40], "other": [40, 40]}
    ckpt = _ckpt(discordance=counts, gates_run=0)
    gate = ctx.config.gate
    thr = threshold(gate_alpha(gate.alpha, gate.alpha_spending, 1), gate.n_candidates)
    floor = max(gate.first_stage, min_wins(thr, gate.bet_cap))
    for classes, (d, n) in (((COUNTING,), (6, 40)), ((COUNTING, OCR), (36, 80)), (("unseen",), (0, 0))):
        expected = min(1024, max(floor, sized_draws(thr, measured_discordance(d, n), 0.1)))
        assert sized_n_max(ctx.typed(), ckpt, classes) == expected
    assert sized_n_max(ctx.typed(), ckpt, (COUNTING,)) < sized_n_max(ctx.typed(), ckpt, (OCR,))
    capped = FakeContext(gate={"n_max": 40, "min_effect": 0.1}).typed()
    assert sized_n_max(capped, ckpt, (OCR,)) == 40
    tiny_effect_floor = FakeContext(gate={"first_stage": 200, "min_effect": 0.9}).typed()
    assert sized_n_max(tiny_effect_floor, ckpt, (COUNTING,)) == 200


def test_a_later_test_is_sized_at_its_own_lower_level() -> None:
    ctx = FakeContext(gate={"alpha_spending": "elond", "min_effect": 0.3, "first_stage": 1}).typed()
    early, late = _ckpt(gates_run=0), _ckpt(gates_run=30)
    assert sized_n_max(ctx, late, (COUNTING,)) > sized_n_max(ctx, early, (COUNTING,))
    helped = _ckpt(gates_run=30, accepts=5)  # e-LOND: each accept raises the level
    assert sized_n_max(ctx, helped, (COUNTING,)) < sized_n_max(ctx, late, (COUNTING,))
    # Exactly the level of the run's next test: gate 31, with the five accepts in it.
    thr = threshold(gate_alpha(0.05, "elond", 31, accepts=5), 1)
    expected = max(1, min_wins(thr, 0.5), sized_draws(thr, measured_discordance(0, 0), 0.3))
    assert sized_n_max(ctx, helped, (COUNTING,)) == min(1024, expected)


def test_without_a_minimum_effect_or_under_a_baseline_rule_a_test_is_n_max() -> None:
    ckpt = _ckpt(discordance={COUNTING: [1, 100]})
    assert sized_n_max(FakeContext(gate={"n_max": 77, "min_effect": None}).typed(), ckpt, (COUNTING,)) == 77
    assert sized_n_max(FakeContext(gate={"n_max": 77, "rule": "mcnemar"}).typed(), ckpt, (COUNTING,)) == 77
    assert sized_n_max(FakeContext(gate={"n_max": 77, "min_effect": 0.3}).typed(), ckpt, (COUNTING,)) < 77
