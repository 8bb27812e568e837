"""The val gain at the end of training (issue: the loop's decisions and numbers hold, item 3).

The gates and guards draw val samples and a run's child runs share one cache salt, so a val gain
scored at sample 0 replays the samples that accepted the edits (a winner's curse). The end-of-run
score draws a reserved sample index no gate or guard reaches, pairs the two bundles as the
holdout does, and says it was selected on val.
"""

from __future__ import annotations

import random
from types import SimpleNamespace
from typing import Any

import pytest
from loop_support import TRAINED, loop_config, train_once
from train_support import write_train_config

from bench_support import Bench, make_bench
from skillharness.commands.eval_table import _val_line
from skillharness.commands.train import val_gain_line
from skillharness.config import load_config
from skillharness.data.loader import load_questions
from skillharness.data.pools import load_pools
from skillharness.data.questions import Question
from skillharness.eval.holdout import run_holdout
from skillharness.eval.report.build import build_report
from skillharness.infer import clustered_paired
from skillharness.sim import SimServer, decisive_world
from skillharness.skills import Workspace
from skillharness.store import GateObservationRow, Prediction, PredictionStatus, RunMetric, RunReader
from skillharness.train.state.reserve import reserved_ids
from skillharness.train.validate.final_score import VAL_GAIN_LABEL, _gain


def _questions(videos: int, per_video: int = 3) -> list[Question]:
    return [
        Question(
            question_id=f"q{v:02d}{k}",
            video_id=f"v{v:02d}",
            videoID=f"v{v:02d}",
            duration="short",
            task_type=("Counting Problem", "OCR Problems")[k % 2],
            question="Which?",
            options=("A. a", "B. b", "C. c", "D. d"),
            answer="A",
        )
        for v in range(videos)
        for k in range(per_video)
    ]


def _predictions(run: str, outcomes: dict[str, bool | None]) -> list[Prediction]:
    return [
        Prediction(
            run_id=run,
            question_id=q,
            answer="A" if right else "B",
            correct=right,
            status=PredictionStatus.OK if right is not None else PredictionStatus.INFRA_ERROR,
        )
        for q, right in outcomes.items()
    ]


def test_item3_val_gain_is_paired_and_clustered_like_the_holdout() -> None:
    questions = _questions(20)
    rng = random.Random(4)
    base = {q.question_id: rng.random() < 0.5 for q in questions}
    # the final bundle agrees with the baseline on most questions: pairing narrows the interval
    final = {q: right if rng.random() < 0.85 else not right for q, right in base.items()}
    final[questions[0].question_id] = None  # an infra error leaves its question unpaired
    # _gain reads only the val questions, the run's seed and its reserve
    ctx: Any = SimpleNamespace(val_questions=tuple(questions), config=SimpleNamespace(seed=0), reserved=())
    gain = _gain(ctx, _predictions("f", final), _predictions("b", base), 41, drawn=set())
    paired = [q for q in questions if final[q.question_id] is not None]
    expected = clustered_paired(
        [float(final[q.question_id] or 0) for q in paired],
        [float(base[q.question_id]) for q in paired],
        [q.video_id for q in paired],
        binary=True,
    )
    assert expected is not None
    assert gain["n"] == len(paired) == 59
    assert (gain["gain"], gain["low"], gain["high"]) == (expected.value, expected.low, expected.high)
    assert (gain["per_question_low"], gain["per_question_high"]) == (
        expected.per_question_low,
        expected.per_question_high,
    )
    assert gain["method"] == "cluster_bootstrap"
    assert gain["videos"] == 20
    assert (gain["selection"], gain["fresh_samples"]) == (VAL_GAIN_LABEL, True)
    # the unpaired Wald interval the val gain used to carry is wider than the paired one
    pf = sum(bool(final[q.question_id]) for q in paired) / len(paired)
    pb = sum(base[q.question_id] for q in paired) / len(paired)
    wald = 1.96 * ((pf * (1 - pf) + pb * (1 - pb)) / len(paired)) ** 0.5
    assert gain["per_question_high"] - gain["per_question_low"] < 2 * wald


def test_item3_cli_labels_the_val_gain_selected_on_val() -> None:
    line = val_gain_line(
        {
            "gain": 0.1,
            "low": 0.0,
            "high": 0.2,
            "per_question_low": 0.05,
            "per_question_high": 0.15,
            "design_effect": 1.7,
            "selection": VAL_GAIN_LABEL,
            "fresh_samples": True,
        }
    )
    assert "selected on val (optimistic)" in line
    # A gain in points, as every other gain we print (issue 49 item 6: one unit per quantity).
    assert line.startswith("val gain +10.0 pts [+0.0, +20.0] by video")
    assert "per question [+5.0, +15.0]" in line
    assert "%" not in line
    assert "design effect 1.70" in line
    assert "The holdout is the headline" in line


@pytest.mark.slow
async def test_item3_final_val_score_draws_samples_no_gate_or_guard_drew(
    train_bench: Bench, experiment
) -> None:
    with SimServer(decisive_world(5), questions=train_bench.questions) as sim:
        config_path = loop_config(experiment, train_bench, sim)
        outcome = await train_once(config_path, "t-fresh")
    assert outcome.gain["selection"] == VAL_GAIN_LABEL
    assert outcome.gain["fresh_samples"] is True
    with RunReader(load_config(config_path).store) as reader:
        metrics = {m.name: m.value for m in reader.ledger(RunMetric, run_id="t-fresh")}
        runs = metrics["final"]["val_runs"]
        assert set(runs) == {"baseline", "final"}
        scored = {arm: reader.predictions(run) for arm, run in runs.items()}
        drawn = {
            (o.question_id, o.sample_idx) for o in reader.ledger(GateObservationRow, train_run_id="t-fresh")
        }
    assert drawn, "the run's gates drew val samples"
    final_sample = outcome.checkpoint.next_sample
    assert max(s for _, s in drawn) < final_sample
    for predictions in scored.values():
        assert {p.sample_idx for p in predictions} == {final_sample}
        assert not {(p.question_id, p.sample_idx) for p in predictions} & drawn
    assert metrics["val_gain"]["selection"] == VAL_GAIN_LABEL
    assert metrics["val_gain"]["n"] == len(scored["final"])
    assert metrics["val_scores"]["final"]["n"] == outcome.final.n == len(scored["final"])
    # Issue 48 item 6: the unselected estimate counts exactly the val questions no observation drew.
    unselected = metrics["val_gain"]["unselected"]
    drawn_ids = {q for q, _ in drawn}
    val_ids = {p.question_id for p in scored["final"]}
    assert unselected["undrawn"] == len(val_ids - drawn_ids)
    assert unselected["val_questions"] == len(val_ids)


@pytest.fixture(scope="module")
def wide_val_bench(tmp_path_factory: pytest.TempPathFactory) -> Bench:
    """Enough val questions per class (about 18) that a gate at temperature 0 stops before the last."""
    return make_bench(tmp_path_factory.mktemp("wide-val"), seed=5, videos=90, sizes=(12, 72, 6))


@pytest.mark.slow
async def test_item6_a_reserve_gives_the_val_gain_its_optimism_and_the_holdout_its_truth(
    wide_val_bench: Bench, experiment
) -> None:
    """Issue 48 item 6, end to end: at temperature 0 every gate of a class draws its own random
    order, so after a few gates no question of a trained class is left undrawn; the reserve
    (``train.gate.reserve``) holds whole val videos out of every gate and guard. The val gain then
    carries the gain on them and the optimism, and the holdout prints both with the oracle's truth."""
    with SimServer(decisive_world(5), questions=wide_val_bench.questions) as sim:
        path = write_train_config(
            experiment,
            wide_val_bench,
            sim,
            agent={"sampling": {"temperature": 0.0}, "concurrency": 8},
            train={
                "epochs": 2,
                "batch_size": 4,
                "task_types": list(TRAINED),
                "gate": {"first_stage": 4, "reserve": 0.25},
            },
        )
        outcome = await train_once(path, "t-zero")
        config = load_config(path)
        ws = Workspace.open(outcome.workspace)
        report = await run_holdout(
            config,
            ws.load(outcome.checkpoint.version),
            ws.load("v0000"),
            train_run_id="t-zero",
            purpose="test: optimism",
        )
        with RunReader(config.store) as reader:
            drawn = {o.question_id for o in reader.ledger(GateObservationRow, train_run_id="t-zero")}
            metrics = {m.name: m.value for m in reader.ledger(RunMetric, run_id="t-zero")}
        files = build_report(config.store.url, "t-zero", experiment / "report.html", oracle_url=sim.base_url)
    val = [
        q
        for q in load_questions(wide_val_bench.questions)
        if q.question_id in set(load_pools(wide_val_bench.pools).questions["val"])
    ]
    reserved = reserved_ids(val, 0.25)
    assert len({q.video_id for q in val if q.question_id in reserved}) == 18  # a quarter of 72 videos
    assert outcome.checkpoint.accepts >= 1
    assert drawn, "the run's gates drew val questions"
    assert not drawn & reserved, "no gate or guard drew a reserved question"
    # What the claims rest on leaves the reserve out, as preflight counts it.
    for task_type in TRAINED:
        gated = [q for q in val if q.task_type == task_type and q.question_id not in reserved]
        assert metrics["final"]["distinct_val"][task_type] == len(gated)
    assert outcome.gain["fresh_samples"] is False
    unselected = outcome.gain["unselected"]
    assert unselected["available"] is True, unselected
    assert unselected["reserved"] == len(reserved)
    undrawn = {i for c in unselected["covered"].values() for i in c["undrawn"]}
    assert reserved <= undrawn
    assert not undrawn & drawn
    assert unselected["optimism"] == pytest.approx(unselected["selected_gain"] - unselected["gain"])
    assert report.val is not None
    assert report.val.unselected == unselected
    assert report.val.unselected_truth is not None
    line = " ".join(_val_line(report.val).split())
    assert f"on the {unselected['undrawn']} val questions no gate drew, the reserve's {len(reserved)}" in line
    assert "(scored truth " in line
    assert "optimism of the val gain on those classes" in line
    # The report says the same, with the oracle's truth of the unselected gain beside it.
    page = " ".join(files.html.read_text().split())
    said = page.partition('id="val-unselected">')[2].partition("</p>")[0]
    assert f"on the {unselected['undrawn']} val questions no gate drew" in said
    assert "(scored truth " in said
