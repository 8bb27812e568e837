"""The holdout adapter, the region-marked diff and the verdict, each on its own."""

from __future__ import annotations

import filecmp
from pathlib import Path

import pytest
from report_support import build_training_store, finish_open, minimal_report_data, val_questions

from skillharness.eval.report import build_report
from skillharness.eval.report.collect import collect_report
from skillharness.eval.report.diff import document_diff
from skillharness.eval.report.holdout import holdout_headline, holdout_rows, read_score
from skillharness.eval.report.model import Headline, Score
from skillharness.eval.report.render import render_html, verdict
from skillharness.skills import EditTarget, initial_bundle
from skillharness.skills.markers import MOMENTUM_MARKER
from skillharness.store import RunMetric, RunReader, RunStatus


def test_holdout_scores_in_every_stored_shape() -> None:
    counted = read_score("final", {"correct": 13, "n": 20})
    assert counted is not None
    assert counted.accuracy == pytest.approx(0.65)
    assert counted.low is not None
    assert counted.low < 0.65 < (counted.high or 0)
    given = read_score("final", {"accuracy": 0.5, "ci": [0.4, 0.6]})
    assert given == Score(label="final", correct=0, n=0, accuracy=0.5, low=0.4, high=0.6)
    assert read_score("final", 0.7) is not None
    assert read_score("final", {"what": 1}) is None
    assert read_score("final", float("nan")) is None


def test_holdout_headline_reads_test_pool_mcnemar_difference_and_agreement() -> None:
    value = {
        "test": {
            "baseline": {"correct": 9, "n": 20},
            "trained": {"accuracy": 0.6},
            "difference": {"diff": 0.15, "low": -0.1, "high": 0.4},
            "mcnemar_p": 0.3,
        },
        "val_holdout_agree": True,
    }
    headline = holdout_headline(value)
    assert headline is not None
    assert headline.pool == "test"
    assert headline.final is not None
    assert headline.final.accuracy == 0.6
    assert headline.gain == {"diff": 0.15, "low": -0.1, "high": 0.4, "gain": 0.15}
    assert headline.mcnemar == {"p": 0.3}
    assert headline.agreement == "True"
    assert holdout_headline({"unrelated": 1}) is None
    assert holdout_headline(["not", "a", "dict"]) is None


def test_holdout_rows_flatten_tables_at_any_depth() -> None:
    value = {
        "by_task_type": {"OCR": {"baseline": {"correct": 3, "n": 7}, "final": {"correct": 4, "n": 7}}},
        "by_duration": [{"label": "short", "diff": 0.1}, {"label": "long", "diff": -0.05}],
    }
    rows = holdout_rows(value)
    assert [(r.group, r.label) for r in rows] == [
        ("by_task_type", "OCR"),
        ("by_duration", "short"),
        ("by_duration", "long"),
    ]
    cells = rows[0].cells
    assert {k: cells[k] for k in ("baseline.correct", "baseline.n", "final.correct", "final.n")} == {
        "baseline.correct": 3,
        "baseline.n": 7,
        "final.correct": 4,
        "final.n": 7,
    }
    assert cells["final.accuracy"] == pytest.approx(4 / 7)
    assert cells["final.interval"].startswith("[")  # the Wilson interval, computed where it was not stored
    assert "accuracy" not in rows[1].cells


def test_the_diff_marks_each_line_with_its_region() -> None:
    bundle = initial_bundle()
    before = bundle.text_of(EditTarget.skill("OCR Problems"))
    lines = before.splitlines()
    marker = lines.index(MOMENTUM_MARKER)
    after_lines = [*lines[:marker], "- a new body rule", *lines[marker:], "- a note in the appendix"]
    diff = document_diff("skill:x", before, "\n".join(after_lines))
    added = [(line.text, line.region) for line in diff if line.kind == "add"]
    assert added == [("- a new body rule", "body"), ("- a note in the appendix", "appendix")]
    assert diff[0].kind == "hunk"
    assert document_diff("system", "a\nb", "a\nc")[-1].region == ""
    assert document_diff("skill:x", before, None) == []


def test_the_verdict_reads_the_paired_interval() -> None:
    def head(low: float, high: float) -> Headline:
        score = Score(label="final", correct=1, n=2, accuracy=0.5, low=0.1, high=0.9)
        return Headline(pool="val", baseline=score, final=score, gain={"gain": 0.1, "low": low, "high": high})

    assert "training helped" in verdict(head(0.02, 0.2))
    assert "training hurt" in verdict(head(-0.3, -0.01))
    assert "no clear change" in verdict(head(-0.1, 0.2))
    assert "no final score" in verdict(Headline(pool="val", baseline=None, final=None))


def test_rendering_escapes_stored_text() -> None:
    from report_support import TASK_TYPES  # noqa: F401  (a stored rationale may hold any text)

    data = minimal_report_data("r<script>")
    html = render_html(data)
    assert "r<script>" not in html
    assert "r&lt;script&gt;" in html
    assert "Partial report" in html


def test_the_page_never_shows_a_store_password() -> None:
    from skillharness.eval.report.build import _shown

    assert _shown("postgresql://harness:secret@db/runs") == "postgresql://harness:***@db/runs"
    assert _shown("sqlite:////tmp/runs.sqlite") == "sqlite:////tmp/runs.sqlite"


@pytest.mark.slow
async def test_the_report_logs_to_a_local_mlflow_file_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A finished run read back through MLflow's own client: parameters, metrics, the report files.

    The test environment installs the mlflow extra (scripts/bootstrap.sh), so this test always runs.
    """
    from mlflow.tracking import MlflowClient

    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")  # MLflow 3 keeps its file store opt-in
    url, uri = f"sqlite:///{tmp_path / 'runs.sqlite'}", (tmp_path / "mlruns").as_uri()
    written = await build_training_store(url, "train-ml", val_questions(12), epochs=1, steps=1, draws=8)
    files = build_report(url, "train-ml", tmp_path / "report.html", mlflow_uri=uri, mlflow_experiment="exp")

    client = MlflowClient(tracking_uri=uri)
    experiment = client.get_experiment_by_name("exp")
    assert experiment is not None
    (run,) = client.search_runs([experiment.experiment_id])
    assert run.info.status == "FINISHED"
    assert run.info.run_name == "train-ml"
    assert run.data.tags["skillharness.run_id"] == "train-ml"
    assert run.data.params["model"] == "sim-vl"
    assert run.data.params["run_id"] == "train-ml"
    assert {"config_hash", "initial_bundle_hash", "pools_sha256", "final_version"} <= set(run.data.params)
    history = client.get_metric_history(run.info.run_id, "val_accuracy")
    assert len(history) == len(written.decisions)
    assert sorted(m.step for m in history) == sorted({m.step for m in history})
    b_correct, n = written.baseline
    assert run.data.metrics["val/baseline_accuracy"] == pytest.approx(b_correct / n)
    assert {a.path for a in client.list_artifacts(run.info.run_id)} == {"report.html", "report.json"}
    page = Path(client.download_artifacts(run.info.run_id, "report.html", str(tmp_path / "back")))
    assert filecmp.cmp(page, files.html, shallow=False)


def test_item_2_typed_holdout_rows_carry_intervals_by_video_per_question_and_design_effect() -> None:
    from report_wide import TWELVE, typed_holdout

    rows = holdout_rows(typed_holdout())
    groups = {row.group: [r.label for r in rows if r.group == row.group] for row in rows}
    assert list(groups) == ["test pool", "by task type", "by video duration", "val against holdout"]
    assert groups["by task type"] == list(TWELVE)
    overall = rows[0].cells
    assert overall["questions (videos)"] == "216 (72)"
    gain = overall["gain"]
    assert gain["value"] == pytest.approx(16 / 216)
    assert (gain["low"], gain["high"]) == pytest.approx((16 / 216 - 0.21, 16 / 216 + 0.19))  # by video
    assert (gain["per_question_low"], gain["per_question_high"]) == pytest.approx(
        (16 / 216 - 0.15, 16 / 216 + 0.14)
    )
    assert gain["design_effect"] == pytest.approx(2.04)
    assert overall["baseline"]["value"] == pytest.approx(101 / 216)
    assert "p Holm" not in overall  # Holm adjusts across task types only
    assert rows[1].cells["p Holm"] == 1.0
    assert rows[-1].cells["selection"] == "selected on val (optimistic)"


async def test_a_stops_final_that_a_resume_trained_past_is_not_shown_as_the_runs_final(
    tmp_path: Path,
) -> None:
    """Stopped by its budget, resumed, then killed: the stored final is the stop's, and the report
    must not show that stop's version and open tests as where the run stands. Once the run is
    closed as stopped again, the stop's final is its own and stands."""
    url = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    written = await build_training_store(
        url, "t", val_questions(12), epochs=1, steps=2, status=RunStatus.RUNNING
    )
    at_stop = {
        "workspace": "/w",
        "version": "v-at-the-stop",
        "state": "running",
        "stop": "budget",
        "open_candidates": 2,
    }
    assert written.store is not None
    written.store.upsert([RunMetric(run_id="t", name="final", value=at_stop)])
    with RunReader(url) as reader:
        data = collect_report(reader, "t")
    assert data.curves, "the run decided something after its resume"
    assert data.final is not None
    assert data.final["version"] == data.curves[-1].version != "v-at-the-stop"
    assert "open_candidates" not in data.final
    assert any("resumed after it stopped by its budget" in r for r in data.partial_reasons)
    await finish_open(written)  # closed as interrupted: the stop's final is the run's own again
    with RunReader(url) as reader:
        data = collect_report(reader, "t")
    assert data.final is not None
    assert data.final["version"] == "v-at-the-stop"
    assert any("stopped by its budget with 2 test(s) open" in r for r in data.partial_reasons)
