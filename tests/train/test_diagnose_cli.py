"""`skillharness diagnose` on a finished run: the waterfall, the simulator truth, one judge call per case."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest
from diagnose_support import AGENT, diagnose_world
from train_support import train_context, write_train_config

from bench_support import Bench
from cli_support import run_cli
from skillharness.commands.diagnose import excluded_line, no_truth_line
from skillharness.sim import SimServer
from skillharness.skills import Bundle
from skillharness.store import DiagnosisRow, RunKind, RunReader
from skillharness.train import DiagnosisReport

pytestmark = pytest.mark.sim_world(diagnose_world(6))


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("SKILLHARNESS_")}


@pytest.mark.slow
async def test_diagnose_prints_the_waterfall_and_truth_and_judges_once(
    tmp_path: Path, bench: Bench, sim: SimServer
) -> None:
    path = write_train_config(
        tmp_path, bench, sim, agent=AGENT, train={"diagnosis": {"max_excluded_share": 1.0}}
    )
    async with train_context(path, run_id="base") as ctx:
        draws = [(q, s) for q in ctx.val_questions for s in range(3)]
        predictions = await ctx.rollout(
            Bundle.load(bench.bundle), draws, "val", kind=RunKind.INFER, pool="val"
        )
    run_id = "base.val"
    wrong = sum(p.correct is not True for p in predictions)

    sim.reset_stats()
    first = await asyncio.to_thread(
        run_cli, "diagnose", "--config", str(path), "--run", run_id, "--json", env=_env()
    )
    assert first.returncode == 0, first.stderr
    doc = json.loads(first.stdout)
    assert doc["waterfall"]["all"]["wrong"] == wrong > 0
    judged = sum(doc["waterfall"]["all"][k] for k in ("defect", "lapse", "uncertain", "judge_failed"))
    assert doc["judge_calls"] == judged > 0
    assert sim.stats()["roles"].get("judge") == judged
    per_type = [row for name, row in doc["waterfall"].items() if name != "all"]
    assert sum(row["wrong"] for row in per_type) == wrong
    truth = doc["truth"]
    assert truth is not None
    assert truth["n"] == doc["waterfall"]["all"]["defect"] + doc["waterfall"]["all"]["lapse"]
    # A noiseless judge reads the same skill text the truth is computed from: it is never wrong.
    assert truth["false_positive"] == truth["false_negative"] == 0

    sim.reset_stats()
    second = await asyncio.to_thread(
        run_cli, "diagnose", "--config", str(path), "--run", run_id, "--evolve-prompts", env=_env()
    )
    assert second.returncode == 0, second.stderr
    assert "evolve prompt (evolve_skill)" in second.stdout  # the dry run of a step's proposals
    assert sim.stats()["roles"].get("evolve") is None  # ... made without one evolve call
    assert "no judge call" in second.stdout
    assert "fingerprint hits" in second.stdout
    assert "simulator truth over" in second.stdout
    for title in ("task type", "wrong", "infra", "parse", "tool", "degraded", "defect", "lapse", "uncertain"):
        assert title in second.stdout
    assert sim.stats()["roles"].get("judge") is None

    with RunReader(f"sqlite:///{tmp_path / 'runs.sqlite'}") as reader:
        rows = reader.ledger(DiagnosisRow, run_id=run_id)
        assert reader.run(run_id).n_ok + reader.run(run_id).n_parse_error == len(predictions)
    assert len(rows) == wrong  # one row per diagnosed case, after two calls


@pytest.mark.slow
def test_diagnose_refuses_another_bundle_a_test_pool_run_and_an_unknown_run(
    tmp_path: Path, bench: Bench, sim: SimServer
) -> None:
    path = write_train_config(tmp_path, bench, sim)

    async def make_run() -> None:
        async with train_context(path, run_id="base") as ctx:
            await ctx.rollout(
                Bundle.load(bench.bundle), [(ctx.val_questions[0], 0)], "val", kind=RunKind.INFER, pool="val"
            )

    asyncio.run(make_run())
    other = tmp_path / "other-bundle"
    Bundle.load(bench.bundle).save(other)
    (other / "system.md").write_text("A different system prompt.\n")
    done = run_cli("diagnose", "--config", str(path), "--run", "base.val", "--bundle", str(other), env=_env())
    assert done.returncode == 2
    assert "not the one run 'base.val' answered with" in done.stderr
    infer = run_cli("infer", "--config", str(path), "--pool", "test", "--run-id", "held", env=_env())
    assert infer.returncode == 0, infer.stderr
    sealed = run_cli("diagnose", "--config", str(path), "--run", "held", env=_env())
    assert sealed.returncode == 2
    assert "never reads the sealed holdout" in sealed.stderr
    missing = run_cli("diagnose", "--config", str(path), "--run", "nope", env=_env())
    assert missing.returncode == 2
    assert "no run 'nope'" in missing.stderr


@pytest.mark.slow
def test_diagnose_of_a_run_of_only_infra_errors_says_so_and_advises_a_resume(
    tmp_path: Path, bench: Bench, sim: SimServer
) -> None:
    path = write_train_config(tmp_path, bench, sim)
    sim.configure_faults(refuse_body_over=1024)  # every agent request refused: every answer an infra error
    down = run_cli("infer", "--config", str(path), "--pool", "val", "--run-id", "down", env=_env())
    assert down.returncode == 1, down.stderr  # the run failed: every request refused
    with RunReader(f"sqlite:///{tmp_path / 'runs.sqlite'}") as reader:
        info = reader.run("down")
    assert info.n_ok + info.n_parse_error == 0 < info.n_infra_error
    sim.clear_faults()
    done = run_cli("diagnose", "--config", str(path), "--run", "down", env={**_env(), "COLUMNS": "400"})
    assert done.returncode == 0, done.stderr
    resume = f"`skillharness infer --config {path} --resume --run-id down`"
    n = info.n_infra_error
    assert (
        f"simulator truth: not available (nothing was judged: all {n} wrong answers are infra errors, "
        f"which the model never answered; fix the endpoint problem, then {resume} asks the {n} infra "
        "error(s) again)"
    ) in done.stdout
    assert (
        f"excluded share 100% > 25%: a training step would stop here (infra {n}; fix the endpoint"
        in done.stdout
    )
    assert "not the simulator" not in done.stdout
    assert "run diagnose again" not in done.stdout  # no judgement failed


def _report(**counts: int) -> DiagnosisReport:
    return DiagnosisReport((), {"wrong": sum(counts.values()), **counts}, judge_calls=0, fingerprint_hits=0)


def test_only_failed_judgements_advise_diagnose_again_and_a_judged_run_blames_the_endpoint() -> None:
    resume = "skillharness infer --config x.yaml --resume --run-id r"
    failed = _report(infra=1, judge_failed=3)
    assert no_truth_line(failed, resume) == (
        "simulator truth: not available (nothing was judged: of 4 wrong answers, infra 1, failed judge 3; "
        f"fix the endpoint problem, then `{resume}` asks the 1 infra error(s) again; "
        "run diagnose again to retry the 3 failed judgement(s))"
    )
    assert excluded_line(failed, 0.25, resume).endswith(
        f"(infra 1, failed judge 3; fix the endpoint problem, then `{resume}` asks the 1 infra error(s) "
        "again; run diagnose again to retry the 3 failed judgement(s))"
    )
    settled = _report(format=2, degraded=1)  # nothing reached the judge, nothing to ask again
    assert no_truth_line(settled, resume) == (
        "simulator truth: not available (nothing was judged: of 3 wrong answers, parse 2, degraded 1)"
    )
    assert excluded_line(settled, 0.25, resume).endswith("a training step would stop here (degraded 1)")
    judged = _report(defect=2, infra=1)
    assert (
        no_truth_line(judged, resume) == "simulator truth: not available (the endpoint is not the simulator)"
    )
    assert no_truth_line(_report(), resume) == (
        "simulator truth: not available (the run has no wrong answer to judge)"
    )
