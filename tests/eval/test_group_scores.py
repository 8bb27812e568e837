"""The holdout's Video-MME-v2 group score: both bundles, the paired gain, infra errors and cut
groups left out, shown beside the per-question accuracy in ``skillharness eval``'s tables (the
report page: tests/report/test_report_group_scores.py)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from eval_support import improved
from rich.console import Console
from train_support import write_train_config

from bench_support import Bench, StartSim, v2_questions_file
from group_support import group_report
from skillharness.commands.eval_table import print_holdout
from skillharness.config import load_config
from skillharness.data import Question, SplitParams, load_adapter, load_benchmark, make_split, write_split
from skillharness.eval import HOLDOUT, HoldoutReport, compare_group_scores, run_holdout
from skillharness.sim import SimConfig
from skillharness.skills import Bundle
from skillharness.store import Prediction, PredictionStatus, RunMetric, RunReader

OK, INFRA = PredictionStatus.OK, PredictionStatus.INFRA_ERROR


def _q(video: str, k: int, kind: str = "relevance", structure: str | None = None) -> Question:
    return Question(
        video_id=video,
        duration="all",
        videoID=video,
        question_id=f"{video}-{k}",
        task_type="Temporal Reasoning",
        question=f"Question {k} of {video}?",
        options=("A. one", "B. two"),
        answer="A",
        group_type=kind,  # type: ignore[arg-type]
        group_structure=structure,
    )


def _preds(run: str, questions: list[Question], rights: str, sample: int = 0) -> list[Prediction]:
    """One prediction per question: ``1`` right, ``0`` wrong, ``x`` an infra error."""
    return [
        Prediction(
            run_id=run,
            question_id=q.question_id,
            sample_idx=sample,
            status=INFRA if r == "x" else OK,
            answer=None if r == "x" else ("A" if r == "1" else "B"),
            correct=None if r == "x" else r == "1",
        )
        for q, r in zip(questions, rights, strict=True)
    ]


# 001 relevance, 002 a logic chain, 003 relevance with its fourth question outside the pool.
QUESTIONS = [_q("001", k) for k in (1, 2, 3, 4)] + [
    _q("002", k, "logic", "[1, 2, 3, 4]") for k in (1, 2, 3, 4)
]
CUT = [_q("003", k) for k in (1, 2, 3)]


def test_group_scores_of_both_bundles_and_the_paired_gain() -> None:
    """Final: 001 all right (1), 002 right, right, wrong, right (k = 2: 4/16). Baseline: 001
    right, wrong, wrong, wrong (1/16), 002 wrong first (k = 0: 0). Means 0.625 and 0.03125;
    the paired gain (0.9375 + 0.25) / 2 = 0.59375."""
    final = _preds("f", QUESTIONS + CUT, "1111" + "1101" + "111")
    baseline = _preds("b", QUESTIONS + CUT, "1000" + "0111" + "000")
    groups = compare_group_scores(QUESTIONS + CUT, final, baseline, samples=1)
    assert groups is not None
    assert (groups.final.score, groups.baseline.score) == pytest.approx((0.625, 0.03125))
    assert groups.gain == pytest.approx(0.59375)
    assert (groups.final.n_groups, groups.final.left_out, groups.n_pairs) == (2, 1, 2)  # 003 is cut
    for low, value, high in [
        (groups.final.low, groups.final.score, groups.final.high),
        (groups.low, groups.gain, groups.high),
    ]:
        assert low is not None
        assert high is not None
        assert low <= value <= high


def test_a_group_with_an_infra_error_is_left_out_not_scored_wrong() -> None:
    final = _preds("f", QUESTIONS, "1111" + "11x1")
    baseline = _preds("b", QUESTIONS, "0000" + "0000")
    groups = compare_group_scores(QUESTIONS, final, baseline, samples=1)
    assert groups is not None
    assert (groups.final.n_groups, groups.final.left_out, groups.final.score) == (1, 1, 1.0)
    assert groups.n_pairs == 1  # 002 is complete in the baseline only: not paired


def test_no_group_score_without_groups() -> None:
    plain = [q.model_copy(update={"group_type": None, "group_structure": None}) for q in QUESTIONS]
    assert (
        compare_group_scores(plain, _preds("f", plain, "1" * 8), _preds("b", plain, "0" * 8), samples=1)
        is None
    )


def _report() -> HoldoutReport:
    final = _preds("f", QUESTIONS, "1111" + "1101")
    baseline = _preds("b", QUESTIONS, "1000" + "0111")
    return group_report(QUESTIONS, final, baseline)


def test_eval_prints_the_group_score_beside_the_accuracy() -> None:
    out = io.StringIO()
    print_holdout(Console(file=out, width=200), _report())
    text = out.getvalue()
    assert "Group score (Video-MME-v2)" in text
    accuracy_line = next(line for line in text.splitlines() if "per-question accuracy" in line)
    group_line = next(line for line in text.splitlines() if "group score" in line and "groups" in line)
    assert "87.5 [" in accuracy_line  # 7/8 right
    assert "50.0 [" in accuracy_line  # 4/8
    assert "62.5 [" in group_line
    assert "3.1 [" in group_line
    assert "+59.4 [" in group_line


def test_the_stored_report_round_trips_and_an_older_one_still_reads() -> None:
    stored = _report().model_dump(mode="json")
    assert HoldoutReport.model_validate(stored).group_scores == _report().group_scores
    old = {k: v for k, v in stored.items() if k != "group_scores"}  # a report stored before groups
    assert HoldoutReport.model_validate(old).group_scores is None


@pytest.mark.slow
async def test_run_holdout_stores_the_group_score_of_grouped_questions(
    tmp_path: Path, holdout_bench: Bench, sim_factory: StartSim
) -> None:
    """The whole holdout on a Video-MME-v2 file split by video against the simulator: the stored
    report carries the group score of the test pool's groups, beside its accuracy rows."""
    path = v2_questions_file(holdout_bench, tmp_path / "test.parquet", videos=6)
    questions = load_benchmark(path, load_adapter("videomme_v2")).questions
    split = make_split(list(questions), SplitParams(sizes=(2, 2, 2), unit="video", seed=3))
    written = write_split(split, list(questions), path, tmp_path / "split", force=False, version="test")
    sim = sim_factory(SimConfig(seed=3), questions)
    # No subtitles folder: the v2 rows name subtitle files (subtitle/<id>.jsonl) this bench has not.
    data = {"questions": str(path), "pools": str(written.pools_path), "benchmark": "videomme_v2"}
    data["subtitles_dir"] = None  # type: ignore[assignment]
    config = load_config(write_train_config(tmp_path, holdout_bench, sim, data=data))
    base = Bundle.load(holdout_bench.bundle)
    report = await run_holdout(config, improved(base, sim), base, train_run_id=None, purpose="test: groups")
    groups = report.group_scores
    assert groups is not None
    assert report.overall.paired.n_pairs == 8  # two test videos, four questions each
    assert (groups.final.n_groups, groups.baseline.n_groups, groups.n_pairs) == (2, 2, 2)
    for arm in (groups.final, groups.baseline):
        assert arm.score is not None
        assert arm.low is not None
        assert arm.high is not None
        assert arm.low <= arm.score <= arm.high
    with RunReader(config.store) as reader:
        [stored] = reader.ledger(RunMetric, run_id=report.final_run_id, name=HOLDOUT)
    assert HoldoutReport.model_validate(stored.value).group_scores == groups
