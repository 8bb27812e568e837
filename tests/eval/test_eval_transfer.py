"""``eval --protocol P``: the two bundles compared again under a reference protocol, the bundle in
that protocol's own slot, on the same sealed test pool (paired by video, McNemar), stored as
``transfer.<protocol>`` beside the holdout of our agent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from eval_support import asked_questions
from test_eval_cli import WIDE, _trained

from bench_support import Bench
from cli_support import run_cli
from skillharness.config import load_config
from skillharness.data.pools import load_pools
from skillharness.eval import HOLDOUT, HoldoutReport, transfer_metric
from skillharness.sim import SimServer
from skillharness.store import RunMetric, RunReader


def _subtitle_free(path: Path) -> None:
    """lmms-eval's videomme_w_subtitle has no instruction slot: the transfer runs videomme."""
    text = path.read_text()
    path.write_text(text.replace("agent:\n", "agent:\n  subtitles: false\n", 1))


@pytest.mark.slow
def test_eval_protocol_compares_the_bundles_under_lmms_eval(
    tmp_path: Path, holdout_bench: Bench, holdout_sim: SimServer
) -> None:
    path, base, final = _trained(tmp_path, holdout_bench, holdout_sim, {"gain": 0.1, "low": 0.0, "high": 0.2})
    _subtitle_free(path)
    args = ("eval", "--config", str(path), "--run", "train-1", "--protocol", "lmms_eval")
    result = run_cli(*args, "--json", "--eval-id", "t1")
    assert result.returncode == 0, result.stderr
    report = HoldoutReport.model_validate(json.loads(result.stdout))
    assert (report.protocol, report.bundle_slot) == ("lmms_eval", "auto")
    assert report.eval_id == "t1.lmms_eval"
    assert (report.final_bundle_hash, report.baseline_bundle_hash) == (final.bundle_hash, base.bundle_hash)
    paired = report.overall.paired
    assert paired.method == "cluster_bootstrap"  # the interval by video
    assert paired.n_videos is not None
    assert paired.n_videos < paired.n_pairs
    assert report.val is None  # the val gain was our agent's, not this protocol's
    # The simulator's truth for the plain path with the bundle in the prompt: the insights help.
    assert report.overall.truth is not None
    assert report.overall.truth.gain > 0
    with RunReader(load_config(path).store) as reader:
        stored = reader.ledger(RunMetric, run_id="train-1")
        asked = {p.question_id for p in reader.predictions(report.final_run_id)}
        provenance = reader.run(report.final_run_id).provenance
    assert asked == set(load_pools(holdout_bench.pools).questions["test"])  # the sealed test pool
    assert provenance.parent_run_id == "train-1"
    names = {m.name for m in stored}
    assert transfer_metric("lmms_eval") in names
    assert HOLDOUT not in names  # our agent's holdout is not overwritten by a transfer
    printed = run_cli(*args, "--eval-id", "t1", env=WIDE)  # resumed: nothing asked again
    assert printed.returncode == 0, printed.stderr
    assert "under protocol lmms_eval (bundle slot auto)" in printed.stdout


@pytest.mark.slow
def test_eval_protocol_without_a_slot_is_refused_before_asking(
    tmp_path: Path, holdout_bench: Bench, holdout_sim: SimServer
) -> None:
    path, _, _ = _trained(tmp_path, holdout_bench, holdout_sim, {"gain": 0.1, "low": 0.0, "high": 0.2})
    with asked_questions(holdout_sim) as log:
        result = run_cli("eval", "--config", str(path), "--run", "train-1", "--protocol", "official")
    assert result.returncode != 0
    assert "agent.protocol official has no slot for a bundle's text" in result.stderr
    assert not log.asked
