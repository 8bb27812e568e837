"""Lever 4 of the efficiency issue: a target's new proposal is tested with its open test's edits."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from loop_support import decisions, loop_config, train_once
from train_support import train_context
from validate_support import document

from bench_support import Bench
from skillharness.config import load_config
from skillharness.sim import SimServer, decisive_world
from skillharness.skills import (
    Bundle,
    Edit,
    EditOp,
    EditRecord,
    EditSet,
    EditTarget,
    Refusal,
    VersionReason,
    Workspace,
)
from skillharness.store import GateDecisionRow, RunReader
from skillharness.train.evolve.merge import under_test, without_landed
from skillharness.train.loop.open_gates import candidate_of, open_candidate, rebase
from skillharness.train.loop.rounds import _advance
from skillharness.train.state.checkpoint import Checkpoint, OpenCandidate
from skillharness.train.state.records import Candidate

COUNTING = EditTarget.skill("Counting Problem")


def _anchor(bundle: Bundle, target: EditTarget) -> str:
    """A line of the target's body that occurs once: the anchor every edit below inserts after."""
    lines = [line for line in document(bundle, target).splitlines() if line.strip()]
    return next(line for line in lines if document(bundle, target).count(line) == 1)


def _patch(bundle: Bundle, target: EditTarget, *edits: Edit) -> Candidate:
    edit_set = EditSet(skill_update_mode="patch", edits=edits, rationale="test")
    applied = bundle.apply(target, edit_set)
    assert not isinstance(applied, Refusal), applied
    return Candidate(
        target, edit_set, applied, document(bundle, target), document(applied, target), choice="only"
    )


def _insert(bundle: Bundle, target: EditTarget, line: str) -> Candidate:
    return _patch(
        bundle, target, Edit(op=EditOp.INSERT_AFTER, anchor=_anchor(bundle, target), text=f"\n- {line}")
    )


async def _open_two(
    experiment: Path,
    bench: Bench,
    sim: SimServer,
    second: Candidate | None = None,
    *,
    wealth: float = 1.0,
    **gate: object,
) -> tuple[Checkpoint, list[str], Workspace, Bundle]:
    """Open a counting test, give it ``wealth``, then propose a second counting edit (merging on
    unless ``gate`` says otherwise)."""
    settings = {"n_max": 48, "first_stage": 8, "merge_open": True, "merge_min_wealth": 1.0, **gate}
    config_path = loop_config(experiment, bench, sim, gate=settings)
    async with train_context(config_path, run_id="t-merge") as ctx:
        initial = Bundle.load(load_config(config_path).agent.bundle)
        ws = Workspace.create(experiment / "ws", initial, reason="initial bundle")
        ckpt = Checkpoint(run_id="t-merge", baseline_run_id="t-merge.baseline")
        cursor = {"epoch": 1, "step": 0, "target": 0}
        ckpt, first = await open_candidate(
            ctx,
            ws,
            ckpt,
            _insert(initial, COUNTING, "Count every object twice."),
            cursor=cursor,
            check_stop=lambda: None,
        )
        ckpt = ckpt.model_copy(update={"open": [ckpt.open[0].model_copy(update={"wealth": wealth})]})
        proposal = second or _insert(initial, COUNTING, "Count slowly, frame by frame.")
        ckpt, status = await open_candidate(
            ctx, ws, ckpt, proposal, cursor={**cursor, "step": 1}, check_stop=lambda: None
        )
    return ckpt, [first, status], ws, initial


async def test_lever4_a_second_proposal_is_tested_with_the_open_edits_of_its_target(
    train_bench: Bench, experiment: Path
) -> None:
    with SimServer(decisive_world(5), questions=train_bench.questions) as sim:
        ckpt, statuses, _, _ = await _open_two(experiment, train_bench, sim)
    assert statuses == ["opened", "opened"]
    partner, merged = ckpt.open
    assert merged.merged_with == [partner.key]
    assert partner.merged_with == []
    texts = [e["text"] for e in merged.edit_set["edits"]]
    # Both insert after one anchor: one insertion, the open test's line first.
    assert texts == ["\n- Count every object twice.\n- Count slowly, frame by frame."]
    assert merged.first_sample >= partner.first_sample  # its own test: fresh samples, its own level
    assert ckpt.gates_run == 2


@pytest.mark.parametrize(
    ("gate", "wealth"),
    [({"merge_open": False}, 1.0), ({}, 0.5)],
    ids=["merge_off", "partner_leans_against"],
)
async def test_lever4_no_merge_when_off_or_when_the_open_test_leans_against(
    train_bench: Bench, experiment: Path, gate: dict[str, object], wealth: float
) -> None:
    with SimServer(decisive_world(5), questions=train_bench.questions) as sim:
        ckpt, statuses, _, _ = await _open_two(experiment, train_bench, sim, wealth=wealth, **gate)
    assert statuses == ["opened", "opened"]
    second = ckpt.open[1]
    assert second.merged_with == []
    assert [e["text"] for e in second.edit_set["edits"]] == ["\n- Count slowly, frame by frame."]


async def test_lever4_a_proposal_that_conflicts_with_the_open_edits_is_tested_alone(
    train_bench: Bench, experiment: Path
) -> None:
    """Replacing a span that holds the open test's insertion point cannot be joined to it (the
    patch set refuses overlapping spans), so the proposal opens on its own."""
    initial = Bundle.load(train_bench.bundle)
    body = document(initial, COUNTING)
    anchor = _anchor(initial, COUNTING)
    end = body.index(anchor) + len(anchor)
    spanning = body[
        body.index(anchor) : end + 1 + body[end + 1 :].index("\n")
    ]  # the anchor and the next line
    deleting = _patch(initial, COUNTING, Edit(op=EditOp.REPLACE, anchor=spanning, text="Count with care."))
    with SimServer(decisive_world(5), questions=train_bench.questions) as sim:
        ckpt, statuses, _, _ = await _open_two(experiment, train_bench, sim, deleting)
    assert statuses == ["opened", "opened"]
    assert ckpt.open[1].merged_with == []
    assert [e["op"] for e in ckpt.open[1].edit_set["edits"]] == ["replace"]


async def test_lever4_when_the_merged_set_lands_its_partner_closes_without_a_retest(
    train_bench: Bench, experiment: Path
) -> None:
    """The partner's lines are in the new incumbent: its rebase finds nothing left to test and it
    closes as reject_invalid at its next pick, drawing nothing; a proposal's landed line is dropped."""
    with SimServer(decisive_world(5), questions=train_bench.questions) as sim:
        ckpt, _, ws, _ = await _open_two(experiment, train_bench, sim)
        config_path = experiment / "experiment.yaml"
        async with train_context(config_path, run_id="t-merge") as ctx:
            partner, merged = ckpt.open
            landed = candidate_of(ctx, ws, merged)
            record = EditRecord(target=COUNTING, reason=VersionReason.ACCEPTED, detail="test")
            version = ws.commit(landed.bundle, "v0000", record)
            ckpt = ckpt.model_copy(update={"version": version, "open": [partner]})
            ckpt = rebase(ctx, ws, ckpt, partner)
            (closing,) = ckpt.open
            assert closing.invalid.endswith("its edits already landed")
            ckpt = await _advance(ctx, ws, ckpt, closing, {"epoch": 1, "step": 2})
        assert ckpt.open == []
    rows = decisions(config_path, "t-merge")
    assert [(r[0], r[2]) for r in rows] == [(partner.key, "reject_invalid")]
    kept = without_landed(EditSet.model_validate_json(json.dumps(merged.edit_set)), landed.document_after)
    assert kept.edits == ()


async def test_lever4_merged_tests_run_end_to_end_and_name_their_partner(
    train_bench: Bench, experiment: Path
) -> None:
    """The real loop on the decisive world, merging on, merges at least one proposal into an open
    test, and its decision's evidence names the partner."""
    gate = {"n_max": 48, "first_stage": 8, "guard_draws": 8, "merge_open": True, "merge_min_wealth": 1.0}
    # Sets that land as sets: the default, split, reopens alone a set whose partner closed.
    gate["merge_credit"] = "set"
    # Two insights per class: beside an open test of one, a proposal can state the other (with one,
    # it can only repeat it or add filler, which the rank role declines).
    world = decisive_world(5)
    world = world.model_copy(update={"world": world.world.model_copy(update={"insights_per_task": 2})})
    with SimServer(world, questions=train_bench.questions) as sim:
        config_path = loop_config(experiment, train_bench, sim, epochs=2, gate=gate)
        await train_once(config_path, "t-merge-loop")
    with RunReader(load_config(config_path).store) as reader:
        rows = reader.ledger(GateDecisionRow, train_run_id="t-merge-loop")
    merged = [r for r in rows if r.evidence.get("merged_with")]
    assert merged, [(r.gate_index, r.target, r.reason, r.evidence.get("rounds")) for r in rows]
    # Each partner has its own row: under its own key, or under the key of its last rebase.
    keys = {r.gate_index for r in rows} | {k for r in rows for k in r.evidence.get("rebased_from") or []}
    assert all(set(r.evidence["merged_with"]) <= keys for r in merged)
    # What a merged accept rests on is in its evidence: the proposals it tested as one set.
    # (A rebase after the partner's edits landed leaves the set's own proposal: one part again.)
    assert all(r.evidence["parts"] >= 2 for r in merged if not r.evidence.get("rebased_from"))
    assert any(r.evidence["parts"] >= 2 for r in merged)
    drawn = [r for r in rows if "rounds" in r.evidence and not r.evidence.get("merged_with")]
    assert drawn
    assert all(r.evidence["parts"] == 1 for r in drawn if not r.evidence.get("rebased_from"))


def test_lever4_without_landed_drops_only_insertions_the_text_holds() -> None:
    edits = (
        Edit(op=EditOp.INSERT_AFTER, anchor="a", text="\n- kept line"),
        Edit(op=EditOp.INSERT_BEFORE, anchor="b", text="- landed line\n"),
        Edit(op=EditOp.REPLACE, anchor="c", text="landed line"),
    )
    edit_set = EditSet(skill_update_mode="patch", edits=edits, rationale="r")
    kept = without_landed(edit_set, "body\n- landed line\nmore")
    assert kept.edits == (edits[0], edits[2])
    joined = EditSet(
        skill_update_mode="patch",
        edits=(Edit(op=EditOp.INSERT_AFTER, anchor="a", text="\n- landed line\n- new line"),),
        rationale="r",
    )
    (left,) = without_landed(joined, "body\n- landed line\nmore").edits
    assert left.text == "\n- new line"
    assert without_landed(edit_set, "nothing here") is edit_set


def test_without_landed_matches_whole_lines_not_parts_of_longer_ones() -> None:
    """A new line that is only part of a longer landed line is still new; whitespace does not count."""
    landed = "body\n- Count every object twice before you answer.\n-   Read  the clock.\nmore"
    edit_set = EditSet(
        skill_update_mode="patch",
        edits=(Edit(op=EditOp.INSERT_AFTER, anchor="a", text="\n- Count every object\n- Read the clock."),),
        rationale="r",
    )
    (left,) = without_landed(edit_set, landed).edits
    assert left.text == "\n- Count every object\n"


async def test_a_merged_set_refused_at_rebase_reopens_as_the_proposal_alone(
    train_bench: Bench, experiment: Path
) -> None:
    """When the incumbent moves so that the merged set no longer applies (its partner's anchor is
    gone), the test restarts on the proposal's own edits, with a new gate index and no partner."""
    with SimServer(decisive_world(5), questions=train_bench.questions) as sim:
        ckpt, _, ws, initial = await _open_two(experiment, train_bench, sim)
        config_path = experiment / "experiment.yaml"
        async with train_context(config_path, run_id="t-merge") as ctx:
            partner, merged = ckpt.open
            assert merged.own_edit_set is not None
            # The partner's anchor is rewritten away; the proposal's own line is re-anchored below.
            anchor = _anchor(initial, COUNTING)
            revised = "- Counting guidance, revised."
            body = document(initial, COUNTING).replace(anchor, revised)
            moved = initial.apply(
                COUNTING, EditSet(skill_update_mode="rewrite", edits=(), body=body, rationale="r")
            )
            assert isinstance(moved, Bundle)
            record = EditRecord(target=COUNTING, reason=VersionReason.ACCEPTED, detail="test")
            version = ws.commit(moved, "v0000", record)
            own = EditSet.model_validate_json(json.dumps(merged.own_edit_set))
            anchored = own.model_copy(
                update={"edits": tuple(e.model_copy(update={"anchor": revised}) for e in own.edits)}
            )
            reopenable = merged.model_copy(update={"own_edit_set": json.loads(anchored.model_dump_json())})
            ckpt = ckpt.model_copy(update={"version": version, "open": [partner, reopenable]})
            ckpt = rebase(ctx, ws, ckpt, reopenable)
    reopened = next((o for o in ckpt.open if o.rebased_from == [merged.key]), None)
    assert reopened is not None, [(o.key, o.invalid, o.rebased_from) for o in ckpt.open]
    assert reopened.invalid == ""
    assert reopened.merged_with == []
    assert reopened.key != merged.key
    assert [e["text"] for e in reopened.edit_set["edits"]] == ["\n- Count slowly, frame by frame."]
    assert "reopened alone" in reopened.choice_detail
    # Without its own edit set to fall back on, the same refusal closes it as invalid.
    bare = reopenable.model_copy(update={"own_edit_set": None})
    async with train_context(config_path, run_id="t-merge") as ctx:
        closed = rebase(ctx, ws, ckpt.model_copy(update={"open": [partner, bare]}), bare)
    assert next(o for o in closed.open if o.key == bare.key).invalid.startswith("rebased onto")


@pytest.mark.parametrize(("partner_d", "lands"), [(1, False), (0, True)], ids=["partner_matched", "set_more"])
async def test_each_part_credit_withholds_a_passing_set_its_partner_matched(
    train_bench: Bench, experiment: Path, partner_d: int, lands: bool
) -> None:
    """The real gate on the decisive world: a set carrying the counting insight passes its test;
    with merge_credit each_part it lands only if it measured more per draw than its partner's
    own test (given here as 16 wins, or 16 ties)."""
    with SimServer(decisive_world(5), questions=train_bench.questions) as sim:
        insight = f"- {sim.world.insights_for('Counting Problem')[0].canonical}"
        initial = Bundle.load(train_bench.bundle)
        ckpt, _, ws, _ = await _open_two(
            experiment, train_bench, sim, _patch(initial, COUNTING, Edit(
                op=EditOp.INSERT_AFTER, anchor=_anchor(initial, COUNTING), text=f"\n{insight}")),
            merge_credit="each_part",
        )  # fmt: skip
        partner, merged = ckpt.open
        seen = partner.model_copy(update={"observed": [partner_d] * 16, "stage_ends": [8, 16]})
        ckpt = ckpt.model_copy(update={"open": [seen, merged]})
        async with train_context(experiment / "experiment.yaml", run_id="t-merge") as ctx:
            for stage in range(12):
                pick = next((o for o in ckpt.open if o.key == merged.key), None)
                if pick is None:
                    break
                ckpt = await _advance(ctx, ws, ckpt, pick, {"epoch": 1, "step": 2 + stage})
    with RunReader(load_config(experiment / "experiment.yaml").store) as reader:
        rows = reader.ledger(GateDecisionRow, train_run_id="t-merge")
    (row,) = [r for r in rows if r.gate_index == merged.key]
    credit = row.evidence["part_credit"]  # the set passed its test either way
    assert (credit["partner"], credit["partner_mean"]) == (partner.key, float(partner_d))
    assert (row.reason == "accept") is lands
    assert (ckpt.version != "v0000") is lands
    assert [o.key for o in ckpt.open] == [partner.key]  # the partner's test goes on


def test_lever4_the_proposer_sees_the_tests_open_as_its_step_began_strongest_first() -> None:
    """A resumed step must ask the same prompts: tests opened in the running step are not listed."""

    def oc(key: int, target: str, wealth: float, opened: tuple[int, int]) -> OpenCandidate:
        edit = Edit(op=EditOp.INSERT_AFTER, anchor="a", text=f"\n- line {key}")
        edit_set = EditSet(skill_update_mode="patch", edits=(edit,), rationale=f"r{key}")
        return OpenCandidate(
            key=key,
            target=target,
            edit_set=json.loads(edit_set.model_dump_json()),
            base_version="v0000",
            base_hash="h",
            bundle_hash="b",
            alpha=0.05,
            n_max=64,
            first_sample=0,
            wealth=wealth,
            opened=opened,
        )

    counting, ocr = COUNTING.label(), "skill:ocr_problems"
    ckpt = Checkpoint(run_id="r", baseline_run_id="r.baseline", epoch=1, step=3).model_copy(
        update={
            "open": [
                oc(1, counting, 0.5, (1, 0)),
                oc(2, counting, 3.0, (1, 1)),
                oc(4, ocr, 1.0, (1, 2)),
                oc(5, counting, 9.0, (1, 3)),  # opened in the running step
            ]
        }
    )
    shown = under_test(ckpt)
    assert list(shown) == [counting, ocr]
    assert [json.loads(v.edits_json)["rationale"] for v in shown[counting]] == ["r2", "r1"]
    assert "line 4" in shown[ocr][0].edits_json
