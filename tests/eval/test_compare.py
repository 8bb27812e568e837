"""Two runs compared on one sealed test pool: the numbers, the refusals and the page.

Every run is written to a real SQLite store (``compare_support``). The numbers are checked against
a computation of their own from the stored predictions: per-question means, the pairing by
question, B − A, McNemar's discordant counts and exact test (scipy), the videos as clusters, Holm
across task types; the interval primitives themselves are pinned in test_stats and
test_cluster_stats.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from compare_support import Experiment, chance, infer_run, training_run, write_experiment
from report_html import parse_page
from report_support import Written
from scipy.stats import binomtest

from skillharness.data import Question
from skillharness.errors import ConfigError
from skillharness.eval import (
    PairedTable,
    RunComparison,
    compare_runs,
    load_test_pool,
    newcombe_paired_interval,
    write_comparison_page,
)
from skillharness.infer import bootstrap_mean_interval, cluster_bootstrap_interval, cluster_sign_flip_test
from skillharness.store import Prediction, PredictionStatus, RunKind, RunReader


@dataclass(frozen=True)
class Store:
    exp: Experiment
    written: dict[str, Written]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    exp = write_experiment(tmp_path_factory.mktemp("compare"))
    written = {
        "train-a": training_run(exp, "train-a", chance(0.45, seed=1)),
        "train-b": training_run(exp, "train-b", chance(0.75, seed=2), epochs=1),
        "train-none": training_run(exp, "train-none", None),
        "train-cut": training_run(exp, "train-cut", None),
    }
    # train-cut was killed during its end-of-training holdout: its final arm began, no report stored.
    infer_run(exp, "train-cut.holdout.final", chance(0.5, seed=10), kind=RunKind.EVAL, parent="train-cut")
    infer_run(exp, "infer-test", chance(0.6, seed=3))
    infer_run(exp, "infer-short", chance(0.6, seed=4), questions=exp.test[3:])
    infer_run(exp, "infer-val", chance(0.6, seed=5), pool="val")
    infer_run(exp, "infer-other-split", chance(0.6, seed=6), pools_sha256="ab" * 32)
    infer_run(exp, "infer-2s-a", chance(0.4, seed=7, samples=2), samples=2)
    infer_run(exp, "infer-2s-b", chance(0.7, seed=8, samples=2), samples=2)
    infer_run(exp, "eval-odd.final", chance(0.5, seed=9), kind=RunKind.EVAL)
    return Store(exp, written)


@pytest.fixture
def reader(store: Store) -> Iterator[RunReader]:
    with RunReader(store.exp.config.store) as opened:
        yield opened


def _compare(store: Store, reader: RunReader, a: str, b: str) -> RunComparison:
    return compare_runs(reader, load_test_pool(store.exp.config), a, b, confidence=0.95)


# --- the numbers, computed again from the stored predictions -------------------------------------


def _means(predictions: list[Prediction]) -> dict[str, float]:
    """Per question, the share of its answered samples that are right (infra errors are no answer)."""
    answered: dict[str, list[float]] = defaultdict(list)
    for p in predictions:
        if p.status is not PredictionStatus.INFRA_ERROR:
            answered[p.question_id].append(1.0 if p.correct else 0.0)
    return {q: sum(v) / len(v) for q, v in answered.items()}


def _expected(
    questions: list[Question], a: dict[str, float], b: dict[str, float], binary: bool
) -> dict[str, float]:
    ids = [q.question_id for q in questions if q.question_id in a and q.question_id in b]
    videos = [q.video_id for q in questions if q.question_id in ids]
    diffs = [b[i] - a[i] for i in ids]
    losses, wins = sum(d < 0 for d in diffs), sum(d > 0 for d in diffs)
    if binary:
        table = PairedTable(
            both=sum(a[i] == b[i] == 1 for i in ids),
            only_first=wins,  # B right, A wrong: B is the first arm of B − A
            only_second=losses,
            neither=sum(a[i] == b[i] == 0 for i in ids),
        )
        per_question = newcombe_paired_interval(table)
    else:
        per_question = bootstrap_mean_interval(diffs)
    low, high = per_question
    if len(set(videos)) < len(ids):  # videos holding two questions: the interval by video
        by_video = cluster_bootstrap_interval(diffs, videos)
        low, high = min(by_video[0], low), max(by_video[1], high)
    single = len(set(videos)) == len(ids)
    mcnemar = binomtest(wins, wins + losses, 0.5).pvalue if wins + losses else 1.0
    return {
        "n_pairs": len(ids),
        "n_videos": len(set(videos)),
        "gain": sum(diffs) / len(diffs),
        "low": low,
        "high": high,
        "per_question_low": per_question[0],
        "per_question_high": per_question[1],
        "b": losses,
        "c": wins,
        "p_per_question": mcnemar,
        "p_value": mcnemar if single else cluster_sign_flip_test(diffs, videos),
        "a_accuracy": sum(a[q.question_id] for q in questions if q.question_id in a)
        / sum(q.question_id in a for q in questions),
    }


def _check_rows(
    test: tuple[Question, ...],
    comparison: RunComparison,
    preds_a: list[Prediction],
    preds_b: list[Prediction],
) -> None:
    questions = list(test)
    a, b = _means(preds_a), _means(preds_b)
    groups: dict[tuple[str, str], list[Question]] = {("overall", "all"): questions}
    for q in questions:
        groups.setdefault(("task_type", q.task_type), []).append(q)
    assert {(r.grouping, r.label) for r in comparison.rows if r.grouping != "duration"} == set(groups)
    for (grouping, label), members in groups.items():
        [row] = [r for r in comparison.rows_of(grouping) if r.label == label]  # type: ignore[arg-type]
        want = _expected(members, a, b, binary=comparison.samples == 1)
        d = row.paired
        got = {
            "n_pairs": d.n_pairs,
            "n_videos": d.n_videos,
            "gain": d.gain,
            "low": d.low,
            "high": d.high,
            "per_question_low": d.per_question_low,
            "per_question_high": d.per_question_high,
            "b": row.mcnemar_b,
            "c": row.mcnemar_c,
            "p_per_question": d.p_per_question,
            "p_value": d.p_value,
            "a_accuracy": row.a.accuracy,
        }
        assert got == pytest.approx(want), (grouping, label)
    # Holm across task types, by hand: the k-th smallest p times (m − k), running maximum, capped at 1.
    tasks = sorted(comparison.rows_of("task_type"), key=lambda r: r.paired.p_value)
    running = 0.0
    for k, row in enumerate(tasks):
        running = max(running, min(1.0, (len(tasks) - k) * row.paired.p_value))
        assert row.paired.p_holm == pytest.approx(running)


def test_two_training_runs_compare_their_holdouts_by_question(store: Store, reader: RunReader) -> None:
    comparison = _compare(store, reader, "train-a", "train-b")
    assert (comparison.a.predictions_run_id, comparison.b.predictions_run_id) == (
        "eval-train-a.final",
        "eval-train-b.final",
    )
    assert comparison.a.eval_id == "eval-train-a"
    assert comparison.questions == len(store.exp.test)
    assert comparison.samples == 1
    preds_a = reader.predictions("eval-train-a.final")
    preds_b = reader.predictions("eval-train-b.final")
    assert any(p.status is PredictionStatus.INFRA_ERROR for p in preds_a + preds_b)
    assert any(p.status is PredictionStatus.PARSE_ERROR for p in preds_a + preds_b)
    _check_rows(store.exp.test, comparison, preds_a, preds_b)
    overall = comparison.overall
    assert overall.paired.gain is not None
    assert overall.paired.gain > 0  # B answers right 75 % of the time, A 45 %
    assert overall.a.parse_errors == sum(p.status is PredictionStatus.PARSE_ERROR for p in preds_a)
    assert overall.b.infra_errors == sum(p.status is PredictionStatus.INFRA_ERROR for p in preds_b)
    # Swapping the runs flips the sign and McNemar's b and c; the test by video is symmetric.
    swapped = _compare(store, reader, "train-b", "train-a").overall
    assert swapped.paired.gain == pytest.approx(-overall.paired.gain)
    assert (swapped.mcnemar_b, swapped.mcnemar_c) == (overall.mcnemar_c, overall.mcnemar_b)
    assert swapped.paired.p_per_question == pytest.approx(overall.paired.p_per_question)


def test_runs_of_several_samples_pair_each_question_s_mean(store: Store, reader: RunReader) -> None:
    comparison = _compare(store, reader, "infer-2s-a", "infer-2s-b")
    assert comparison.samples == 2
    assert comparison.overall.paired.method in ("bootstrap", "cluster_bootstrap")
    preds = [reader.predictions(run_id) for run_id in ("infer-2s-a", "infer-2s-b")]
    _check_rows(store.exp.test, comparison, *preds)


def test_an_infer_or_eval_run_of_the_test_pool_stands_for_itself(store: Store, reader: RunReader) -> None:
    comparison = _compare(store, reader, "infer-test", "train-b")
    assert comparison.a.kind == "infer"
    assert comparison.a.predictions_run_id == "infer-test"
    assert comparison.a.eval_id is None
    assert _compare(store, reader, "eval-odd.final", "train-a").a.kind == "eval"


# --- refusals ----------------------------------------------------------------------------------


def _refused(store: Store, reader: RunReader, a: str, b: str) -> str:
    with pytest.raises(ConfigError) as caught:
        _compare(store, reader, a, b)
    return str(caught.value)


def test_different_question_sets_are_refused_naming_what_differs(store: Store, reader: RunReader) -> None:
    message = _refused(store, reader, "train-a", "infer-short")
    missing = sorted(q.question_id for q in store.exp.test[:3])
    assert "not asked the same test questions" in message
    assert f"eval-train-a.final holds {len(store.exp.test)}, infer-short {len(store.exp.test) - 3}" in message
    assert f"3 only in 'train-a' ({', '.join(missing)})" in message
    assert "0 only in 'infer-short' (none)" in message


def test_a_training_run_without_a_holdout_is_refused_with_the_command_that_makes_one(
    store: Store, reader: RunReader
) -> None:
    message = _refused(store, reader, "train-none", "train-a")
    assert "'train-none' is a training run with no holdout" in message
    assert "skillharness eval --config EXPERIMENT --run train-none" in message
    assert "eval.run_holdout_eval: true" in message
    cut = _refused(store, reader, "train-cut", "train-a")
    assert "its end-of-training holdout was cut short" in cut
    assert "skillharness train --config EXPERIMENT --resume train-cut` finishes it" in cut
    assert "skillharness eval" not in cut  # that would be one more read of the test pool


def test_runs_on_another_split_or_pool_are_refused(store: Store, reader: RunReader) -> None:
    message = _refused(store, reader, "train-a", "infer-other-split")
    assert "different splits' test pools" in message
    assert store.exp.pools_sha256[:12] in message
    assert "abababababab" in message
    message = _refused(store, reader, "infer-val", "train-a")
    assert "'infer-val' ran on pool val, not a split's test pool" in message


def test_other_samples_and_one_run_twice_are_refused(store: Store, reader: RunReader) -> None:
    message = _refused(store, reader, "infer-test", "infer-2s-a")
    assert "not asked the same samples (question, index)" in message
    assert f"infer-test holds {len(store.exp.test)}, infer-2s-a {2 * len(store.exp.test)}" in message
    message = _refused(store, reader, "train-a", "eval-train-a.final")
    assert "both stand for the predictions of 'eval-train-a.final'" in message


def test_a_config_of_another_split_is_refused(store: Store, reader: RunReader, tmp_path: Path) -> None:
    other = write_experiment(tmp_path / "other", videos=21)
    with pytest.raises(ConfigError, match="compare them with their own experiment's config"):
        compare_runs(reader, load_test_pool(other.config), "train-a", "train-b")


# --- the page --------------------------------------------------------------------------------------


def test_the_page_shows_both_runs_curves_and_accepted_edits(
    store: Store, reader: RunReader, tmp_path: Path
) -> None:
    comparison = _compare(store, reader, "train-a", "train-b")
    path = write_comparison_page(reader, comparison, tmp_path / "compare.html")
    page = parse_page(path.read_text())
    for key, run_id in (("a", "train-a"), ("b", "train-b")):
        assert page[f"curves-{key}"].find_all("svg"), key
        accepted = [d.gate_index for d in store.written[run_id].decisions if d.reason == "accept"]
        assert accepted, run_id
        shown = [int(e.attrs["data-gate"]) for e in page[f"edits-{key}"].find_all("div", "edit")]
        assert shown == accepted, key
        assert run_id in page[f"run-{key}"].text
    # Run A trained two epochs, run B one: their pages differ, each side holds its own edits.
    assert len(store.written["train-a"].decisions) > len(store.written["train-b"].decisions)
    [overall] = page["comparison-overall"].find_all("td", "gain")
    assert float(overall.attrs["data-value"]) == pytest.approx(comparison.overall.paired.gain)
    assert float(overall.attrs["data-low"]) == pytest.approx(comparison.overall.paired.low)
    labels = [tr.attrs["data-label"] for tr in page["comparison-task_type"].find_all("tr") if tr.attrs]
    assert labels == [r.label for r in comparison.rows_of("task_type")]
    assert "<script" not in path.read_text()


def test_a_side_that_trained_nothing_says_so_on_the_page(
    store: Store, reader: RunReader, tmp_path: Path
) -> None:
    comparison = _compare(store, reader, "infer-test", "train-a")
    page = parse_page(write_comparison_page(reader, comparison, tmp_path / "c.html").read_text())
    assert not page["curves-a"].find_all("svg")
    assert "it trained nothing, so it has no learning curve" in page["curves-a"].text
    assert "it made no edit" in page["edits-a"].text
    assert page["curves-b"].find_all("svg")
