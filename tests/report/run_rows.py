"""Small pieces of a fake training run: provenance, a run with predictions, wealth paths, documents."""

from __future__ import annotations

import random

from skillharness.llm.types import SamplingParams
from skillharness.skills import Bundle, EditSet, EditTarget
from skillharness.store import (
    Prediction,
    PredictionStatus,
    RunKind,
    RunProvenance,
    RunStatus,
    RunStore,
)


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


def wealth_path(rng: random.Random, draws: int, accept: bool) -> list[tuple[int, int, int, float, float]]:
    """Paired outcomes and the wealth (and mirror harm wealth) after each, with a fixed bet."""
    rows: list[tuple[int, int, int, float, float]] = []
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
