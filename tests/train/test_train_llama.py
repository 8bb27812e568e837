"""A real model in the loop: training against llama.cpp (SmolLM2) on the synthetic benchmark.

The model's judge, evolve and rank replies are mostly poor. What is checked is that nothing
crashes: every reply that is not valid becomes a refusal or a failed diagnosis, counted; the run
stops on its budget, resumes, and its report renders.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import yaml

from bench_support import Bench, make_bench
from llama_support import LlamaServer, llama_experiment
from skillharness.config import load_config
from skillharness.eval.report import build_report
from skillharness.store import DiagnosisRow, GateDecisionRow, RunReader
from skillharness.train.loop.training import TrainRequest, run_folder, run_training
from skillharness.train.state.budget import TrainingStopped
from skillharness.train.state.checkpoint import Checkpoint

pytestmark = [pytest.mark.contract, pytest.mark.slow, pytest.mark.timeout(900)]

_REASONS = {"accept", "reject_evidence", "reject_inertia", "reject_guard", "reject_invalid"}


def _config(folder: Path, bench: Bench, llama: LlamaServer) -> Path:
    doc = llama_experiment(folder, bench, llama, max_steps=2, sampling={"temperature": 0.7, "max_tokens": 64})
    doc |= {
        "train": {
            "epochs": 1,
            "batch_size": 1,
            "gate": {"n_max": 8, "first_stage": 8, "guard_draws": 0},
            "evolve": {"candidates": 2},
            "diagnosis": {"max_excluded_share": 1.0},
            "roles": {role: {"max_tokens": 256} for role in ("judge", "evolve", "rank", "momentum")},
            "budget": {"max_calls": 60},
        },
        "eval": {"run_holdout_eval": False},
    }
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "experiment.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


async def _invocation(config_path: Path, *, resume: bool) -> bool:
    """One budgeted invocation; True when the run finished, False when the budget stopped it."""
    request = TrainRequest(run_id="llama-t", folder=run_folder(config_path.parent, "llama-t"), resume=resume)
    try:
        await run_training(load_config(config_path), request)
    except TrainingStopped:
        return False
    return True


def test_training_against_llama_cpp_survives_poor_replies_resumes_and_reports(
    tmp_path: Path, llama: LlamaServer
) -> None:
    bench = make_bench(tmp_path / "bench", seed=7, videos=6, sizes=(2, 2, 2))
    config_path = _config(tmp_path / "exp", bench, llama)
    finished = asyncio.run(_invocation(config_path, resume=False))
    resumes = 0
    while not finished and resumes < 3:  # each invocation has its own budget of 60 calls
        finished = asyncio.run(_invocation(config_path, resume=True))
        resumes += 1
    ckpt = Checkpoint.load(run_folder(config_path.parent, "llama-t"))
    assert ckpt.state.value in {"finished", "stopped_early", "interrupted"}
    settings = load_config(config_path)
    with RunReader(settings.store) as reader:
        decisions = reader.ledger(GateDecisionRow, train_run_id="llama-t")
        diagnoses = reader.ledger(DiagnosisRow)
    assert {d.reason for d in decisions} <= _REASONS
    for d in decisions:
        if d.reason == "reject_invalid":
            assert d.detail  # a refusal says why
    assert all(row.cause for row in diagnoses)  # judged, failed (retryable) or settled by C1/C2
    files = build_report(settings.store.url, "llama-t", tmp_path / "report.html", gate=settings.train.gate)
    html = files.html.read_text()
    assert "llama-t" in html
    assert "Gates" in html
