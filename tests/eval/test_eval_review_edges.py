"""``skillharness eval`` at its edges: an eval id too long for a transfer's runs, a run of the wrong kind."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest
import yaml
from eval_support import asked_questions
from test_eval_cli import _trained
from test_eval_transfer import _subtitle_free

from bench_support import Bench
from cli_support import run_cli
from skillharness.config import load_config
from skillharness.data import Pool
from skillharness.sim import SimServer
from skillharness.store import RunKind, RunProvenance, RunStatus, RunStore


def _eval_runs(store: Path) -> list[str]:
    with sqlite3.connect(store) as conn:
        return [row[0] for row in conn.execute("SELECT run_id FROM runs WHERE kind = 'eval'")]


@pytest.mark.slow
def test_an_eval_id_too_long_for_a_transfers_runs_is_refused_before_the_test_pool_is_read(
    tmp_path: Path, holdout_bench: Bench, holdout_sim: SimServer
) -> None:
    path, _, _ = _trained(tmp_path, holdout_bench, holdout_sim, {"gain": 0.1, "low": 0.0, "high": 0.2})
    _subtitle_free(path)
    doc = yaml.safe_load(path.read_text())
    doc["eval"]["protocols"] = ["lmms_eval"]  # our agent's holdout first, then the transfer
    path.write_text(yaml.safe_dump(doc))
    # 185 characters: "<id>.final" fits the store's 200, "<id>.lmms_eval.baseline" does not.
    eval_id = "e" * 185
    with asked_questions(holdout_sim) as asked:
        refused = run_cli("eval", "--config", str(path), "--run", "train-1", "--eval-id", eval_id)
    assert refused.returncode == 2
    assert "--eval-id" in refused.stderr
    assert f"{eval_id}.lmms_eval.final" in refused.stderr
    assert "Traceback" not in refused.stderr
    assert sum(asked.asked.values()) == 0, "our agent's holdout read the test pool before the refusal"
    assert _eval_runs(tmp_path / "runs.sqlite") == []


@pytest.mark.slow
def test_eval_run_of_a_training_runs_part_names_its_kind(
    tmp_path: Path, holdout_bench: Bench, holdout_sim: SimServer
) -> None:
    path, _, _ = _trained(tmp_path, holdout_bench, holdout_sim, {"gain": 0.1, "low": 0.0, "high": 0.2})
    config = load_config(path)
    gate = RunProvenance(
        run_id="train-1.g0000.cand",
        kind=RunKind.GATE,
        config_hash="test",
        bundle_hash="b" * 64,
        pool=Pool.VAL,
        model=config.llm.model,
        endpoints=tuple(ep.base_url for ep in config.llm.endpoints),
        sampling=config.agent.sampling,
        parent_run_id="train-1",
    )

    async def store_it() -> None:
        with RunStore.open(config.store) as store:
            await (await store.open_run(gate)).close(RunStatus.FINISHED)

    asyncio.run(store_it())
    refused = run_cli("eval", "--config", str(path), "--run", "train-1.g0000.cand")
    assert refused.returncode == 2
    message = " ".join(refused.stderr.split())
    assert "--run 'train-1.g0000.cand': a run of kind gate, part of training run 'train-1'" in message
    against = run_cli(
        "eval",
        "--config",
        str(path),
        "--bundle",
        str(holdout_bench.bundle),
        "--against",
        "train-1.g0000.cand",
    )
    assert against.returncode == 2
    assert "--against 'train-1.g0000.cand': a run of kind gate" in " ".join(against.stderr.split())
