"""Helpers shared by the store tests."""

from __future__ import annotations

from skillharness.llm.types import SamplingParams
from skillharness.store import Prediction, PredictionStatus, RunKind, RunProvenance, StepRole, TraceStep


def provenance(run_id: str = "run-1", **changes: object) -> RunProvenance:
    base = RunProvenance(
        run_id=run_id,
        kind=RunKind.INFER,
        config_hash="c" * 64,
        bundle_hash="b" * 64,
        pools_sha256="p" * 64,
        pool="val",
        model="sim-vl",
        endpoints=("http://127.0.0.1:8000/v1",),
        sampling=SamplingParams(temperature=0.0, seed=7),
    )
    return base.model_copy(update=changes) if changes else base


def prediction(question_id: str, run_id: str = "run-1", sample_idx: int = 0, **changes: object) -> Prediction:
    fields: dict[str, object] = {
        "run_id": run_id,
        "question_id": question_id,
        "sample_idx": sample_idx,
        "task_type": "Counting Problem",
        "duration": "short",
        "answer": "B",
        "correct": True,
        "status": PredictionStatus.OK,
        "prompt_tokens": 100,
        "completion_tokens": 5,
        "latency_s": 0.5,
        "n_steps": 2,
        "relevant_text_hash": "h" * 64,
    }
    fields.update(changes)
    return Prediction.model_validate(fields)


def step(
    question_id: str, step_idx: int, run_id: str = "run-1", sample_idx: int = 0, **changes: object
) -> TraceStep:
    fields: dict[str, object] = {
        "run_id": run_id,
        "question_id": question_id,
        "sample_idx": sample_idx,
        "step_idx": step_idx,
        "role": StepRole.ASSISTANT if step_idx else StepRole.USER,
        "content": f"step {step_idx}",
        "frames_shown": (1.5, 3.0),
        "subtitles_shown": ("[1.5s] hello",),
    }
    fields.update(changes)
    return TraceStep.model_validate(fields)
