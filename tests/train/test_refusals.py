"""A server set up below the agent's requests never looks like an agent that is always wrong
(train/state/refusals.py): refusals are counted by arm, kept out of every gate and the BaselineCache,
and too many stop the run at the baseline, naming the HTTP status, the endpoint and the likely limit.

Real HTTP on loopback against the simulator, made to refuse with ``faults.refuse_body_over``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from loop_support import TRAINED, loop_config, train_once
from train_support import train_context, write_train_config
from validate_support import gate_experiment, rewrite, with_lines

from bench_support import Bench
from skillharness.agent import Prediction, PredictionStatus, refusal_of
from skillharness.agent.episode import REQUEST_REFUSED
from skillharness.agent.refusal import refusal_message
from skillharness.config import load_config
from skillharness.errors import FatalLLMError
from skillharness.sim import FaultConfig, SimConfig, SimServer
from skillharness.skills import Bundle, EditTarget
from skillharness.store import DiagnosisRow, RunMetric, RunReader, TrainStepRow
from skillharness.train.state.checkpoint import Checkpoint
from skillharness.train.state.records import GateReason
from skillharness.train.state.refusals import RefusalTally, RequestsRefused, arm_of, check_refusals
from skillharness.train.validate.arms import Arms
from skillharness.train.validate.baseline_cache import BaselineCache
from skillharness.train.validate.paired_gate import validate

# The incumbent's system prompt carries this much more text than the candidate's: every one of its
# requests is over the limit below, and none of the candidate's (text-only, a few KB).
_PAD = "Read every caption twice before you answer the question. " * 900  # about 52 KB
_LIMIT = 40_000


def _refused(question_id: str, sample: int = 0, run_id: str = "r.g0001.inc") -> Prediction:
    error = FatalLLMError("gpu-a: HTTP 413: too large", status=413, endpoint="gpu-a", limit="body_size")
    return Prediction(
        run_id=run_id,
        question_id=question_id,
        sample_idx=sample,
        status=PredictionStatus.INFRA_ERROR,
        error_class=REQUEST_REFUSED,
        error_message=refusal_message(error),
    )


def _answered(question_id: str, run_id: str = "r.g0001.inc") -> Prediction:
    return Prediction(
        run_id=run_id, question_id=question_id, answer="A", correct=False, status=PredictionStatus.OK
    )


def test_the_tally_counts_each_draw_once_by_arm_and_stops_past_the_share() -> None:
    tally = RefusalTally()
    tally.add("baseline", [_answered(f"q{i}", "r.baseline") for i in range(9)])
    tally.add("incumbent", [_refused("q0")])
    tally.add("incumbent", [_refused("q0")])  # asked again (a resume): the same draw, counted once
    check_refusals(tally, what="r.g0001.inc", limit=0.1)  # 1 of 10: at the limit, go on
    assert tally.by_arm() == {"baseline": {"asked": 9, "refused": 0}, "incumbent": {"asked": 1, "refused": 1}}
    tally.add("candidate", [_refused("q1", run_id="r.g0001.cand")])
    with pytest.raises(RequestsRefused) as caught:
        check_refusals(tally, what="r.g0001.cand", limit=0.1)
    context = caught.value.context
    assert (context["refused"], context["asked"]) == (2, 11)
    assert (context["status"], context["endpoint"], context["likely_limit"]) == (413, "gpu-a", "body_size")
    assert context["causes"] == {"HTTP 413 from gpu-a (body_size)": 2}
    assert "client_max_body_size" in str(caught.value)
    assert context["reason"] == "requests_refused"


def test_a_child_runs_suffix_names_its_arm() -> None:
    assert [arm_of(s) for s in ("baseline", "e1s2.roll", "g0003.inc", "g0003.cand", "val.abc")] == [
        "baseline",
        "rollout",
        "incumbent",
        "candidate",
        "val",
    ]


async def test_a_server_refusing_every_agent_request_stops_the_run_at_the_baseline(
    train_bench: Bench, experiment: Path
) -> None:
    """The issue's run: a 1 KB body limit, text-only probes pass, the baseline scored 0/36 before."""
    world = SimConfig(seed=3, faults=FaultConfig(refuse_body_over=1024))
    with SimServer(world, questions=train_bench.questions) as sim:
        config_path = loop_config(experiment, train_bench, sim)
        with pytest.raises(RequestsRefused) as caught:
            await train_once(config_path, "t-refused")
        refused = sim.stats()["statuses"].get("413", 0)
    context = caught.value.context
    assert context["what"] == "t-refused.baseline"
    assert (context["refused"], context["asked"]) == (36, 36)
    assert context["by_arm"] == {"baseline": {"asked": 36, "refused": 36}}
    assert (context["status"], context["likely_limit"]) == (413, "body_size")
    assert context["endpoint"] == sim.base_url
    assert "HTTP 413" in str(caught.value)
    assert refused == 36, "a refusal is asked once: the same limit refuses it again"
    ckpt = Checkpoint.load(experiment / "runs" / "t-refused")
    assert (ckpt.epoch, ckpt.step, ckpt.gates_run) == (1, 0, 0), "no step ran on refused evidence"


def _long_incumbent(bundle: Bundle) -> Bundle:
    return with_lines(bundle, EditTarget.system(), [_PAD]).bundle


async def test_a_refused_incumbent_sample_is_neither_a_loss_nor_cached(
    tmp_path: Path, bench: Bench, default_bundle: Bundle
) -> None:
    """At temperature 0 a cached refusal would be replayed against fresh candidate samples."""
    world = SimConfig(seed=3, faults=FaultConfig(refuse_body_over=_LIMIT))
    incumbent = _long_incumbent(default_bundle)
    with SimServer(world, questions=bench.questions) as sim:
        path = gate_experiment(tmp_path, bench, sim, temperature=0.0, gate={})
        _allow_refusals(path)
        async with train_context(path) as ctx:
            draws = [(q, 0) for q in ctx.val_questions]
            arms = Arms(ctx, incumbent, default_bundle, gate_index=1)
            outcomes = await arms.outcomes(draws)
            cached = BaselineCache(ctx.store, ctx.sampling_hash, scope=ctx.baseline_scope).lookup(
                incumbent, draws
            )
            record = ctx.refusals.record()
    n = len(draws)
    assert all(o.incumbent is None and o.d is None for o in outcomes), "a refusal is never a loss"
    assert all(o.candidate is not None for o in outcomes)
    assert cached == {}
    assert arms.refused == {"incumbent": n, "candidate": 0, "both": 0, "draws": n}
    assert record["by_arm"]["incumbent"] == {"asked": n, "refused": n}
    assert record["by_arm"]["candidate"] == {"asked": n, "refused": 0}


async def test_a_gate_whose_draws_are_refused_decides_nothing_from_them(
    tmp_path: Path, validate_bench: Bench, default_bundle: Bundle
) -> None:
    """The candidate that shortens what the server refused wins nothing: refused draws are skipped,
    counted in the evidence, and a plan they exhaust ends without evidence (not an outage)."""
    world = SimConfig(seed=3, faults=FaultConfig(refuse_body_over=_LIMIT))
    incumbent = _long_incumbent(default_bundle)
    candidate = rewrite(incumbent, EditTarget.system(), default_bundle.system_prompt)
    trained = ["OCR Problems", "Object Reasoning", "Counting Problem", "Temporal Reasoning"]
    gate = {"n_max": 16, "first_stage": 8, "guard_draws": 0}
    with SimServer(world, questions=validate_bench.questions) as sim:
        path = gate_experiment(tmp_path, validate_bench, sim, temperature=0.0, gate=gate, task_types=trained)
        _allow_refusals(path)
        async with train_context(path) as ctx:
            outcome = await validate(ctx, incumbent, candidate, gate_index=1, alpha=0.05, first_sample=0)
    assert outcome.reason is GateReason.REJECT_INERTIA
    assert outcome.decision is not None
    assert (outcome.decision.wins, outcome.decision.losses) == (0, 0)
    refused = outcome.evidence["refused"]
    assert refused["incumbent"] == refused["draws"] == outcome.decision.infra > 0
    assert refused["candidate"] == 0
    assert "refused by the server" in outcome.detail


def _allow_refusals(path: Path) -> None:
    """These tests look at how refusals are scored, below the share that stops a run."""
    doc = yaml.safe_load(path.read_text())
    doc["infer"] = {"max_refused_share": 1.0}
    path.write_text(yaml.safe_dump(doc))


async def test_refused_long_conversations_are_reported_and_never_learned_from(
    train_bench: Bench, experiment: Path
) -> None:
    """Only conversations that fetch frames twice are refused (vLLM's images-per-prompt limit at 10,
    agent.max_frames 16; the simulated agent fetches 4 to 8 frames once, and a second time in 30 % of
    its episodes): the run goes on, and the refusals show in its metrics and step rows, never in a
    diagnosis or a score."""
    world = SimConfig(seed=3, faults=FaultConfig(refuse_images_over=10))
    with SimServer(world, questions=train_bench.questions) as sim:
        path = write_train_config(
            experiment,
            train_bench,
            sim,
            agent={"vision": True, "initial_frames": 2, "max_frames": 16, "sampling": {"temperature": 0.0}},
            train={
                "epochs": 1,
                "batch_size": 6,
                "task_types": list(TRAINED),
                "gate": {"n_max": 24, "first_stage": 8, "guard_draws": 0},
            },
            infer={"max_refused_share": 0.5},
        )
        outcome = await train_once(path, "t-long")
    with RunReader(load_config(path).store) as reader:
        final = {m.name: m.value for m in reader.ledger(RunMetric, run_id="t-long")}
        steps = reader.ledger(TrainStepRow, train_run_id="t-long")
        diagnosed = {(r.run_id, r.question_id) for r in reader.ledger(DiagnosisRow)}
        refused_keys = {
            (p.run_id, p.question_id)
            for child in reader.children("t-long")
            for p in reader.predictions(child.run_id)
            if refusal_of(p) is not None
        }
    refusals = final["refusals"]
    assert 0 < refusals["refused"] < refusals["asked"] / 2
    assert refusals["causes"].keys() == {f"HTTP 400 from {sim.base_url} (images_per_prompt)"}
    assert refusals["by_arm"]["baseline"]["refused"] > 0
    # Per role every refused call counts (a resume or a later score of the same draw asks it again).
    assert final["usage"]["agent"]["refused"] >= refusals["refused"]
    assert sum(row.summary["refused"] for row in steps) > 0
    assert refused_keys
    assert not refused_keys & diagnosed, "no refused draw reached diagnosis"
    assert outcome.baseline.n + refusals["by_arm"]["baseline"]["refused"] == 36
