"""SimLab's pure parts: reading a run at budget marks, the statistics over seeds, the report's rows.

The benchmark itself (benchmarks/train.py) is no test: it trains for minutes. These check what it
computes from a run's curve, so a wrong reading cannot hide behind a long run.
"""

from __future__ import annotations

import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import train as simlab_train
from simlab.efficiency import SETUPS, Job, accept_kind, plan_jobs, prepare
from simlab.marks import Accept, Reading, accept_of, point_at, read_mark, spread, summarize
from simlab.report import (
    VAL_TEST_HEAD,
    curve_table,
    kind_table,
    line_counts,
    runs_table,
    summary_table,
    verdicts,
)
from simlab.world import (
    MVBENCH_LIKE,
    CurveObserver,
    Point,
    Source,
    mvbench_like_source,
    sim_fingerprint,
    sim_world,
)
from skillharness.data.adapter import load_adapter
from skillharness.data.pools import load_pools
from skillharness.data.selection import read_questions
from skillharness.errors import RunError
from skillharness.train.state.rank_trial import TRIAL_DECLINED, TRIAL_ENDORSED, RankTrial


def _p(calls: int, version: str, closure: float, alpha: float = 0.0) -> Point:
    return Point(calls, version, closure, closure, alpha, int(alpha / 0.05))


# Baseline at 139 calls; a decision at 250 accepts v0001 (two checkpoints at that count: the
# decision's and the step's end); another at 400 accepts v0002; the run ends at 450 calls.
CURVE = [
    _p(139, "v0000", 0.0),
    _p(250, "v0000", 0.0, 0.05),
    _p(250, "v0001", 0.2, 0.05),
    _p(400, "v0002", 0.5, 0.10),
]
ACCEPTS = [Accept(250, 0.0, 0.01), Accept(400, 0.03, 0.02)]


def _reading(budget: int, closure: float, calls: int, **extra: object) -> Reading:
    fields = {
        "alpha_sum": 0.5,
        "gates": 10,
        "accepts": 4,
        "harmful_test": 1,
        "harmful_val": 0,
        "end_reason": "max_calls",
        "unspent": 0.0,
        "closure_val": closure,
    } | extra
    return Reading(budget=budget, calls=calls, closure_test=closure, **fields)  # type: ignore[arg-type]


def test_a_mark_is_read_at_the_last_checkpoint_at_or_before_it() -> None:
    # At 200 calls the run holds what it held at 139: v0001 came at 250, past the mark.
    assert point_at(CURVE, 200) == CURVE[0]
    assert point_at(CURVE, 250) == CURVE[2]
    assert point_at(CURVE, 399) == CURVE[2]
    assert point_at(CURVE, 139) == CURVE[0]
    # Before the first checkpoint: the initial bundle, nothing closed.
    assert (point_at(CURVE, 100).version, point_at(CURVE, 100).closure_test) == ("v0000", 0.0)


def test_a_curve_that_ends_before_the_budget_is_read_at_its_end() -> None:
    assert point_at(CURVE, 10_000) == CURVE[-1]
    with pytest.raises(RunError, match="no checkpoint"):
        point_at([], 100)


def test_a_reading_counts_the_accepts_made_by_then_and_a_zero_effect_as_harmful() -> None:
    early = read_mark(CURVE, ACCEPTS, 300, end_reason="stopped_early", spent=450)
    assert (early.accepts, early.harmful_test, early.harmful_val) == (1, 1, 0)
    assert (early.closure_test, early.calls, early.alpha_sum) == (0.2, 250, 0.05)
    assert (early.end_reason, early.unspent) == ("max_calls", 0.0)
    before = read_mark(CURVE, ACCEPTS, 200, end_reason="stopped_early", spent=450)
    assert (before.accepts, before.closure_test, before.calls) == (0, 0.0, 139)


def test_a_budget_the_run_never_reached_keeps_the_runs_end_reason_and_its_unspent_share() -> None:
    late = read_mark(CURVE, ACCEPTS, 1_000, end_reason="stopped_early", spent=450)
    assert (late.accepts, late.harmful_test, late.closure_test) == (2, 1, 0.5)
    assert late.end_reason == "stopped_early"
    assert late.calls == 450
    assert late.unspent == pytest.approx(0.55)


def test_summary_over_seeds_gives_mean_spread_harm_share_and_calls_per_point() -> None:
    summary = summarize(
        [_reading(8_000, 0.1, 8_000), _reading(8_000, 0.3, 8_100, end_reason="stopped_early")]
    )
    assert summary.closure.mean == pytest.approx(0.2)
    assert summary.closure.sd == pytest.approx(0.1414, abs=1e-4)
    assert (summary.closure.low, summary.closure.high, summary.closure.n) == (0.1, 0.3, 2)
    assert summary.calls_per_point == pytest.approx(8_050 / 20)
    assert (summary.accepts, summary.harmful_test, summary.harmful_share) == (8, 2, 0.25)
    assert summary.alpha_sum == pytest.approx(1.0)
    assert summary.end_reasons == {"max_calls": 1, "stopped_early": 1}


def test_summary_refuses_readings_of_different_budgets_and_no_readings() -> None:
    with pytest.raises(RunError, match="one budget"):
        summarize([_reading(2_000, 0.1, 2_000), _reading(8_000, 0.1, 8_000)])
    with pytest.raises(RunError, match="no values"):
        spread([])
    assert spread([0.4]).sd == 0.0


def test_no_closed_gap_has_no_calls_per_point() -> None:
    assert summarize([_reading(2_000, 0.0, 2_000)]).calls_per_point is None


def test_verdicts_judge_the_setups_closure_target_and_the_harm_share() -> None:
    assert (
        verdicts("videomme-v", summarize([_reading(8_000, 0.31, 8_000)])) == "≥ 30%: met; harm ≤ 5%: missed"
    )
    met = summarize([_reading(32_000, 0.49, 32_000, accepts=40, harmful_test=2)])
    assert verdicts("videomme-q", met) == "≥ 50%: missed; harm ≤ 5%: met"
    assert verdicts("videomme-q", summarize([_reading(2_000, 0.1, 2_000, accepts=0, harmful_test=0)])) == "–"
    # The mean over seeds is judged, not the best seed.
    spread_out = summarize([_reading(8_000, 0.1, 8_000), _reading(8_000, 0.45, 8_000)])
    assert verdicts("videomme-v", spread_out).startswith("≥ 30%: missed")


def _record(setup: str, seed: int, closure: float, **extra: object) -> dict[str, object]:
    curve = [_p(100, "v0000", 0.0), _p(1_500, "v0000", 0.0), _p(2_010, "v0001", closure / 2)]
    curve.append(_p(8_050, "v0002", closure))
    marks = {b: read_mark(curve, [], b, end_reason="max_calls", spent=8_050) for b in (2_000, 8_000)}
    return {
        "setup": setup,
        "seed": seed,
        "budget": 8_000,
        "curve": [p.__dict__ for p in curve],
        "readings": {str(b): r.__dict__ for b, r in marks.items()},
    } | extra


def test_the_table_sets_gepas_row_beside_ours_and_leaves_failed_runs_out() -> None:
    records = [
        _record("videomme-q", 0, 0.2),
        _record("videomme-q", 1, 0.4),
        {"setup": "videomme-q", "seed": 2, "budget": 8_000, "error": "RunError: boom"},
    ]
    lines = summary_table(records, ["videomme-q"], [2_000, 8_000]).splitlines()
    ours = next(
        i for i, line in enumerate(lines) if line.startswith("| videomme-q | 8,000 | ours | 2 | 15.0 %")
    )
    assert lines[ours + 1].startswith("| videomme-q | 8,000 | GEPA¹ | | 14.3 % |")
    # At 2,000 calls the runs hold what they held at 1,500: v0001 came at 2,010.
    assert any(line.startswith("| videomme-q | 2,000 | ours | 2 | 0.0 %") for line in lines)


def test_the_curve_table_reads_every_grid_mark_the_budget_reaches() -> None:
    table = curve_table([_record("videomme-v", 0, 0.2), _record("videomme-v", 1, 0.6)], ["videomme-v"])
    header, _, row = table.splitlines()
    assert header == "| setup | 500 calls | 1,000 calls | 2,000 calls | 4,000 calls | 8,000 calls |"
    cells = row.strip("| ").split(" | ")[1:]
    assert cells[:3] == ["0.0 % (0.0 %–0.0 %)"] * 3  # v0001 came at 2,010: past the 2,000 mark
    # At 8,000 the last checkpoint at or before it is v0001's: v0002 came at 8,050.
    assert cells[3:] == ["20.0 % (10.0 %–30.0 %)"] * 2


def test_the_curve_table_ends_at_the_runs_budget_even_off_the_grid() -> None:
    header = curve_table([_record("videomme-q", 0, 0.2, budget=600)], ["videomme-q"]).splitlines()[0]
    assert header == "| setup | 500 calls | 600 calls |"


def test_harm_is_counted_per_inserted_line_when_the_record_has_lines() -> None:
    """A helpful accept that carries a useless line counts that line: one of three lines here."""
    helpful = accept_of(
        {
            "calls": 250,
            "effect_test": 0.05,
            "effect_val": 0.04,
            "lines": [
                {"line": "a", "effect_test": 0.03, "effect_val": 0.02},
                {"line": "b", "effect_test": 0.0, "effect_val": 0.0},
            ],
        }
    )
    useless = accept_of(
        {
            "calls": 400,
            "effect_test": 0.0,
            "effect_val": 0.0,
            "lines": [{"line": "c", "effect_test": 0.02, "effect_val": 0.0}],
        }
    )
    reading = read_mark(CURVE, [helpful, useless], 1_000, end_reason="max_calls", spent=450)
    assert (reading.accepts, reading.harmful_test) == (2, 1)
    assert (reading.lines, reading.harmful_lines) == (3, 1)
    summary = summarize([reading])
    assert summary.harmful_share == pytest.approx(1 / 3)  # per line, not per accept (1/2)
    # A record from before lines were scored keeps the per-accept share.
    old = summarize([read_mark(CURVE, ACCEPTS, 1_000, end_reason="max_calls", spent=450)])
    assert old.lines == 0
    assert old.harmful_share == pytest.approx(1 / 2)


def test_issue_37_simlab_sets_simulator_knobs_from_the_command_line(tmp_path: Path) -> None:
    """``--sim KEY=VALUE`` (and ``--seed-coupling``) reach every simulator setting, strictly, and the
    jobs carry them; the fingerprint tells two worlds' settings apart, not two seeds."""
    argv = ["--dataset", "videomme-q", "--sim", "evolve.proposer_compliance=0.5", "--seed-coupling", "0.2"]
    settings = simlab_train.sim_settings(simlab_train.parser().parse_args(argv))
    assert settings == {"evolve": {"proposer_compliance": 0.5}, "world": {"seed_coupling": 0.2}}
    assert simlab_train.sim_label(settings) == ["evolve.proposer_compliance=0.5", "world.seed_coupling=0.2"]
    world = sim_world("realistic", 3, settings)
    assert (world.seed, world.world.seed_coupling, world.evolve.proposer_compliance) == (3, 0.2, 0.5)
    assert world.evolve.insight_rate == sim_world("realistic", 3).evolve.insight_rate  # the rest kept
    decisive = sim_world("decisive", 3, {"world": {"filler_effect_sd": 0.0}})
    assert (decisive.world.insights_per_task, decisive.world.filler_effect_sd) == (1, 0.0)
    assert sim_fingerprint(world) == sim_fingerprint(sim_world("realistic", 4, settings))
    assert sim_fingerprint(world) != sim_fingerprint(sim_world("realistic", 3))
    for bad in (
        ["--sim", "world.seed_couplng=0.2"],
        ["--sim", "evolve.proposer_compliance=2"],
        ["--sim", "x"],
    ):
        with pytest.raises(SystemExit, match="--sim"):
            simlab_train.sim_settings(simlab_train.parser().parse_args(["--dataset", "videomme-q", *bad]))
    # A relative questions path names the file the command's directory sees, not one beside a run's config.
    given = simlab_train.parser().parse_args(["--dataset", "videomme-q", "--videomme", "q.json"]).videomme
    assert given == Path.cwd() / "q.json"
    source = Source(tmp_path / "q.json", tmp_path, None, (1, 1, 1), 1)
    jobs = plan_jobs(
        ["videomme-q"],
        [0, 1],
        [100],
        separate=False,
        world="realistic",
        sources={"videomme-q": source},
        folder=tmp_path,
        max_minutes=1.0,
        epochs=1,
        train={},
        sim=settings,
    )
    assert [job.sim for job in jobs] == [settings, settings]


def test_train_settings_are_checked_before_any_run_and_refused_for_the_ablation_rows() -> None:
    assert simlab_train.train_settings(["gate.alpha=0.025", "task_types=null"]) == {
        "gate": {"alpha": 0.025},
        "task_types": None,
    }
    for bad, needle in ((["gate.alpah=0.1"], "unknown key 'alpah'"), (["gate.alpha=2"], "gate.alpha")):
        with pytest.raises(SystemExit, match=needle):
            simlab_train.train_settings(bad)
    with pytest.raises(SystemExit, match="--set applies to the efficiency setups"):
        simlab_train.main(["--dataset", "synth", "--set", "gate.alpha=0.1", "--no-write"])


@pytest.mark.parametrize(
    "setting",
    [
        "world.side_effect_share=0.5",
        "world.side_effect_min=0.01",
        "world.side_effect_max=0.2",
        "evolve.rank_informativeness=0",
        "evolve.sample_alike=0.9",
        "evolve.decoy_rate=0",
    ],
)
def test_the_side_effect_and_ranker_settings_are_set_from_the_command_line_and_fingerprinted(
    setting: str,
) -> None:
    args = simlab_train.parser().parse_args(["--dataset", "videomme-q", "--sim", setting])
    settings = simlab_train.sim_settings(args)
    ((section, values),) = settings.items()
    ((key, value),) = values.items()
    world = sim_world("realistic", 3, settings)
    assert getattr(getattr(world, section), key) == value
    assert sim_fingerprint(world) != sim_fingerprint(sim_world("realistic", 3))


def test_the_honest_default_world_has_side_effects_and_a_ranker_that_reads_only_text() -> None:
    world = sim_world("realistic", 0)
    assert world.world.side_effect_share > 0
    assert 0 < world.evolve.rank_informativeness < 1
    assert world.evolve.sample_alike > 0
    assert world.evolve.decoy_rate > 0
    upside_down = ["--sim", "world.side_effect_min=0.3", "--sim", "world.side_effect_max=0.1"]
    args = simlab_train.parser().parse_args(["--dataset", "videomme-q", *upside_down])
    with pytest.raises(SystemExit, match="--sim"):  # a size range upside down is refused
        simlab_train.sim_settings(args)


def test_a_runs_row_sets_val_closure_beside_test_closure_and_the_lines_harmful_on_test() -> None:
    record = _record("videomme-q", 0, 0.2) | {
        "closure_val": 0.5,
        "closure_test": 0.2,
        "spent": 8_000,
        "end_reason": "max_calls",
        "wall_s": 80.0,
        "trained_classes": ["a", "b"],
        "open_at_end": 0,
        "accepts": [
            {
                "lines": [
                    {"effect_test": 0.02, "effect_val": 0.03},
                    {"effect_test": -0.01, "effect_val": 0.01},
                ]
            },
            {"lines": [{"effect_test": 0.0, "effect_val": 0.0}]},
        ],
    }
    header, _, row = runs_table([record]).splitlines()
    assert header.endswith(f"| {VAL_TEST_HEAD} |")
    assert row.endswith("| 50.0 % | 20.0 % | +30.0 points | 2/3 (67%) |")
    assert line_counts(record) == (3, 2)
    failed = runs_table([{"setup": "videomme-q", "seed": 1, "budget": 8_000, "error": "boom"}]).splitlines()[
        2
    ]
    assert failed.count("|") == header.count("|")


def test_the_ablation_rows_and_the_gepa_peer_carry_the_same_val_to_test_columns() -> None:
    result = simlab_train.RunResult(
        closure_val=0.6,
        closure_test=0.4,
        calls={"agent": 10},
        calls_to={m: None for m in simlab_train.MILESTONES},
        accepts=2,
        harmful_val=0,
        harmful_test=1,
        alpha_sum=0.1,
        lines=4,
        harmful_lines=1,
        gain={"gain": 0.1, "low": 0.0, "high": 0.2},
        true_val_gain=0.1,
        true_test_gain=0.05,
        momentum={},
        wall_s=1.0,
    )
    table = simlab_train.gain_table({"full": [result]}).strip().splitlines()
    assert table[0].endswith(f"| {VAL_TEST_HEAD} |")
    assert table[-1].endswith("| 60.0 % | 40.0 % | +20.0 points | 1/4 (25%) |")
    peer_gepa = pytest.importorskip("peer_gepa")
    reading = {
        "budget": 8_000,
        "calls": 7_900,
        "returned": 1,
        "closure_test": 0.1,
        "closure_val": 0.3,
        "best_in_pool": 1,
        "best_closure_test": 0.1,
        "accepted": 1,
        "harmful": 0,
        "lines": 2,
        "harmful_lines": 1,
    }
    record = {
        "setup": "videomme-q",
        "seed": 0,
        "readings": {"8000": reading},
        "calls_by_phase": {},
        "proposals": {},
        "spent": 8_000,
        "overshoot": 0,
        "end_reason": "max_calls",
        "wall_s": 1.0,
        "iterations": 3,
    }
    header, _, row = peer_gepa.seeds_table([record], [8_000]).splitlines()
    assert header.endswith(f"| {VAL_TEST_HEAD} |")
    assert row.endswith("| 30.0 % | 10.0 % | +20.0 points | 1/2 (50%) |")


def test_issue_47_the_mvbench_like_setup_deals_20_tasks_of_five_options_with_8_val_questions_each(
    tmp_path: Path,
) -> None:
    """The second shape: MVBench's 20 tasks, five options, 10/8/50 questions per task. Built here at a
    tenth of its 1,334 videos (the full build takes minutes), split with the setup's own rule."""
    setup = SETUPS["mvbench-like"]
    assert (setup.unit, setup.sizes, setup.min_val_per_class) == ("question", (200, 160, 1_000), 8)
    assert int(MVBENCH_LIKE["videos"]) * 3 == 4_002  # three questions per video: about 200 per task
    source = mvbench_like_source(tmp_path, tmp_path, videos=134, cache=tmp_path / "cache")
    questions = read_questions(source.questions, source.benchmark)
    by_task = Counter(q.task_type for q in questions)
    assert source.benchmark == "mvbench"
    assert len(questions) == 402
    assert set(by_task) == set(load_adapter("mvbench").task_types)
    assert len(by_task) == 20
    assert set(by_task.values()) <= {20, 21}
    assert {len(q.options) for q in questions} == {5}
    small = replace(setup, sizes=(20, 160, 100))  # 1/8/5 per task: what 20 questions a task allow
    job = Job(setup.name, 0, 100, (100,), "realistic", source, tmp_path / "run", 1.0)
    pools = load_pools(prepare(job, small).pools).questions
    task_of = {q.question_id: q.task_type for q in questions}
    assert {pool: len(ids) for pool, ids in pools.items()} == {"train": 20, "val": 160, "test": 100}
    assert Counter(task_of[i] for i in pools["val"]) == dict.fromkeys(by_task, 8)


def test_the_curve_records_each_trial_test_as_it_closes_with_the_calls_then() -> None:
    now = {"calls": 0}
    observer = CurveObserver(truth=None, workspace=Path("."), count=lambda _ctx: now["calls"])  # type: ignore[arg-type]
    observer.ctx = object()  # type: ignore[assignment]
    observer._closure["v0000"] = (0.0, 0.0)
    trial = RankTrial()
    states = [
        trial.observe(TRIAL_ENDORSED, [1, 1]),
        trial.observe(TRIAL_ENDORSED, [1, 1]).observe(TRIAL_DECLINED, [0, -1]).observe(TRIAL_ENDORSED, [1]),
        trial.observe(TRIAL_ENDORSED, [1, 1]).observe(TRIAL_DECLINED, [0, -1]).observe(TRIAL_ENDORSED, [1]),
    ]
    for calls, state in zip((100, 200, 300), states, strict=True):
        now["calls"] = calls
        observer.on_checkpoint(
            SimpleNamespace(version="v0000", rank_trial=state, alpha_spent=0.0, gates_run=0)
        )
    # Two closes at the second checkpoint (their order within it is not known), none new at the
    # third: each close recorded once, at the calls of the checkpoint that first holds it.
    assert observer.trial_closes == [(100, "endorsed", 1.0), (200, "endorsed", 1.0), (200, "declined", -0.5)]


def test_an_accept_records_whether_a_merged_set_an_own_test_or_a_test_decided_at_once_made_it() -> None:
    # The evidence of an open test's decision carries its parts and partners (train/loop/rounds.py).
    assert accept_kind({"parts": 2, "merged_with": [3]}) == "merged"
    assert accept_kind({"parts": 1, "merged_with": []}) == "own"
    # Once its partner's edits landed, what is left of a merged set is tested (and sized) as one
    # proposal, though it still names the partner.
    assert accept_kind({"parts": 1, "merged_with": [3]}) == "own"
    # An epoch end's momentum or consolidation test is opened and decided at once.
    assert accept_kind({"alpha": 0.05, "guard": None}) == "at_once"


def test_the_kind_table_counts_lines_of_no_effect_by_how_their_accept_was_tested() -> None:
    def line(effect: float) -> dict[str, float | str]:
        return {"line": "- a rule", "effect_test": effect, "effect_val": effect}

    run = {
        "setup": "videomme-q",
        "accepts": [
            {"kind": "own", "lines": [line(0.02)]},
            {"kind": "merged", "lines": [line(0.03), line(0.0)]},
            {"kind": "at_once", "lines": [line(-0.01), line(0.01)]},
            {"lines": [line(0.0)]},  # measured before accepts said how they were tested
        ],
    }
    failed = {"setup": "videomme-q", "error": "boom"}
    table = kind_table([run, failed], ["videomme-q"])
    assert table.splitlines()[0] == "| setup | own | merged | at_once | not recorded |"
    assert table.splitlines()[2] == "| videomme-q | 0/1 | 1/2 | 1/2 | 1/1 |"
