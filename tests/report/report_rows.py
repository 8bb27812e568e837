"""Small pieces of a fake training run: provenance, a run with predictions, wealth paths, documents."""

from __future__ import annotations

import random
from typing import Any

from skillharness.llm.types import SamplingParams
from skillharness.skills import Bundle, EditSet, EditTarget
from skillharness.store import (
    GateObservationRow,
    Prediction,
    PredictionStatus,
    RunKind,
    RunProvenance,
    RunStatus,
    RunStore,
)
from skillharness.train.state.records import BEFORE_TESTING

Draw = tuple[int, int, int, float, float]  # draw index, candidate, incumbent, wealth, harm wealth


def provenance(run_id: str, kind: RunKind, pool: str | None, parent: str | None) -> RunProvenance:
    return RunProvenance(
        run_id=run_id,
        kind=kind,
        config_hash="c" * 64,
        bundle_hash="b" * 64,
        pools_sha256="ab12" * 16,
        pool=pool,
        model="sim-vl",
        endpoints=("http://127.0.0.1:8000/v1",),
        sampling=SamplingParams(temperature=0.0, seed=7),
        parent_run_id=parent,
    )


async def write_run(
    store: RunStore,
    run_id: str,
    kind: RunKind,
    pool: str | None,
    parent: str | None,
    answers: list[tuple[str, str, bool]],
    status: RunStatus = RunStatus.FINISHED,
) -> None:
    """A run with one first-sample prediction per (question id, task type, correct)."""
    log = await store.open_run(provenance(run_id, kind, pool, parent))
    for question_id, task_type, correct in answers:
        await log.write_prediction(
            Prediction(
                run_id=run_id,
                question_id=question_id,
                task_type=task_type,
                duration="short",
                answer="A" if correct else "B",
                correct=correct,
                status=PredictionStatus.OK,
                prompt_tokens=120,
                completion_tokens=6,
            )
        )
    if status is RunStatus.RUNNING:
        await log.flush()
        return
    await log.close(status)


def wealth_path(rng: random.Random, draws: int, accept: bool) -> list[Draw]:
    """Paired outcomes and the wealth (and mirror harm wealth) after each, with a fixed bet."""
    rows: list[Draw] = []
    wealth, harm = 1.0, 1.0
    for i in range(draws):
        cand = int(rng.random() < (0.8 if accept else 0.45))
        inc = int(rng.random() < 0.5)
        wealth *= 1 + 0.3 * (cand - inc)
        harm *= 1 + 0.3 * (inc - cand)
        rows.append((i, cand, inc, wealth, harm))
    return rows


def documents(bundle: Bundle, task_type: str, note: str) -> tuple[Bundle, str, str]:
    target = EditTarget.skill(task_type)
    body = bundle.skill(task_type).body
    edit = EditSet(skill_update_mode="rewrite", edits=(), body=f"{body}\n- {note}", rationale=note)
    after = bundle.apply(target, edit)
    assert isinstance(after, Bundle)
    return after, bundle.text_of(target), after.text_of(target)


def observations(
    run_id: str,
    index: int,
    task_type: str,
    questions: list[str],
    path: list[tuple[int, int, int, float, float]],
) -> list[GateObservationRow]:
    """One gate's paired draws, as the validation step writes them."""
    return [
        GateObservationRow(
            train_run_id=run_id,
            gate_index=index,
            draw_index=i,
            question_id=questions[i],
            task_type=task_type,
            sample_idx=0,
            arm="pair",
            candidate=cand,
            incumbent=inc,
            wealth=wealth,
            harm_wealth=harm,
        )
        for i, cand, inc, wealth, harm in path
    ]


def decision_evidence(reason: str, alpha: float, obs: list[GateObservationRow]) -> dict[str, Any]:
    """The decision row's evidence: alpha, guard, choice and the ladder's last decision."""
    evidence: dict[str, Any] = {"alpha": alpha, "guard": None, "choice": "rank"}
    if reason == "reject_invalid":  # as training stores a proposal refused before any draw
        return {**evidence, BEFORE_TESTING: "anchor_absent"}
    if not obs:
        return evidence
    wins = sum(1 for o in obs if (o.candidate or 0) > (o.incumbent or 0))
    losses = sum(1 for o in obs if (o.candidate or 0) < (o.incumbent or 0))
    evidence["decision"] = {
        "kind": reason,
        "wealth": obs[-1].wealth,
        "harm_wealth": obs[-1].harm_wealth,
        "threshold": 1 / alpha if alpha else 0.0,
        "n": len(obs),
        "wins": wins,
        "losses": losses,
        "ties": len(obs) - wins - losses,
        "infra": 0,
        "stage": 1,
        "next_request": 0,
    }
    return evidence
