"""Two runs on one sealed test pool, written to a real SQLite store, for the comparison tests.

The experiment is a small questions file (no videos: the comparison asks nothing) split by video.
A training run gets its curves, gates and accepted edits from the report tests' builder
(``tests/report/report_support.py``), then a holdout as ``skillharness eval`` leaves it: two eval
runs on the test pool and the ``holdout`` metric (a ``HoldoutReport``) under the training run.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import sqlite3
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import yaml

_REPORT_TESTS = str(Path(__file__).resolve().parents[1] / "report")
if _REPORT_TESTS not in sys.path:
    sys.path.insert(0, _REPORT_TESTS)

from report_support import Written, build_training_store, val_questions  # noqa: E402

from skillharness.config import Config, load_config  # noqa: E402
from skillharness.data import Question  # noqa: E402
from skillharness.data.loader import load_questions  # noqa: E402
from skillharness.data.pools import write_split  # noqa: E402
from skillharness.data.split import SplitParams, make_split  # noqa: E402
from skillharness.eval import HOLDOUT, HoldoutReport, compare_groups, load_test_pool  # noqa: E402
from skillharness.llm.types import SamplingParams  # noqa: E402
from skillharness.store import (  # noqa: E402
    Prediction,
    PredictionStatus,
    RunKind,
    RunMetric,
    RunProvenance,
    RunStatus,
    RunStore,
)

TASKS = ("Counting Problem", "OCR Problems", "Action Recognition")
DURATIONS = ("short", "medium", "long")
# Per question and sample: (status, correct); None leaves the draw unasked.
Outcome = tuple[PredictionStatus, bool | None] | None
Answer = Callable[[Question, int], Outcome]


@dataclass(frozen=True)
class Experiment:
    config_path: Path
    config: Config
    test: tuple[Question, ...]
    pools_sha256: str
    store_path: Path


def write_experiment(folder: Path, *, videos: int = 24) -> Experiment:
    """Questions of ``videos`` videos (three each, one per task type), split 4/4/rest by video."""
    rows = [
        {
            "video_id": f"{v:03d}",
            "duration": DURATIONS[v % 3],
            "domain": "Knowledge",
            "sub_category": "Science",
            "url": f"https://example.org/{v:03d}",
            "videoID": f"vid{v:03d}",
            "question_id": f"{v:03d}-{k + 1}",
            "task_type": task,
            "question": f"Question {k + 1} about video {v}?",
            "options": ["A. one", "B. two", "C. three", "D. four"],
            "answer": "A",
        }
        for v in range(videos)
        for k, task in enumerate(TASKS)
    ]
    folder.mkdir(parents=True, exist_ok=True)
    questions_path = folder / "questions.json"
    questions_path.write_text(json.dumps(rows))
    questions = load_questions(questions_path)
    split = make_split(questions, SplitParams(sizes=(4, 4, videos - 8), unit="video", seed=1))
    written = write_split(split, questions, questions_path, folder / "split", force=False, version="test")
    doc = {
        "data": {"questions": str(questions_path), "pools": str(written.pools_path)},
        "llm": {"model": "sim-vl", "endpoints": [{"base_url": "http://127.0.0.1:9/v1"}]},
        "store": {"url": f"sqlite:///{folder / 'runs.sqlite'}"},
        "eval": {"run_holdout_eval": False},
    }
    config_path = folder / "experiment.yaml"
    config_path.write_text(yaml.safe_dump(doc))
    config = load_config(config_path)
    pool = load_test_pool(config)
    return Experiment(config_path, config, pool.questions, pool.pools_sha256, folder / "runs.sqlite")


def chance(p: float, seed: int, *, samples: int = 1) -> Answer:
    """Right with probability ``p`` (seeded per question and sample), a few unparsed or infra answers."""

    def answer(q: Question, s: int) -> Outcome:
        rng = random.Random(f"{seed}:{q.question_id}:{s}")
        roll = rng.random()
        if s >= samples:
            return None
        if roll < 0.04:
            return PredictionStatus.INFRA_ERROR, None
        if roll < 0.08:
            return PredictionStatus.PARSE_ERROR, False
        return PredictionStatus.OK, rng.random() < p

    return answer


def _provenance(
    run_id: str, kind: RunKind, pools_sha256: str, parent: str | None, pool: str | None = "test"
) -> RunProvenance:
    return RunProvenance(
        run_id=run_id,
        kind=kind,
        config_hash="c" * 64,
        bundle_hash=f"{run_id}-bundle".ljust(64, "0"),
        pools_sha256=pools_sha256,
        pool=pool,
        model="sim-vl",
        endpoints=("http://127.0.0.1:9/v1",),
        sampling=SamplingParams(temperature=0.0, seed=7),
        parent_run_id=parent,
    )


async def write_predictions(
    store: RunStore,
    provenance: RunProvenance,
    questions: tuple[Question, ...],
    answer: Answer,
    samples: int = 1,
) -> list[Prediction]:
    """One finished run with a prediction per question and sample that ``answer`` decides."""
    log = await store.open_run(provenance)
    written = []
    for q in questions:
        for s in range(samples):
            outcome = answer(q, s)
            if outcome is None:
                continue
            status, correct = outcome
            prediction = Prediction(
                run_id=provenance.run_id,
                question_id=q.question_id,
                sample_idx=s,
                task_type=q.task_type,
                duration=q.duration,
                answer=None if status is not PredictionStatus.OK else ("A" if correct else "B"),
                correct=correct,
                status=status,
            )
            await log.write_prediction(prediction)
            written.append(prediction)
    await log.close(RunStatus.FINISHED)
    return written


async def _holdout(
    exp: Experiment, train_run_id: str, eval_id: str, final: Answer, samples: int
) -> HoldoutReport:
    """The two eval runs of a holdout and its report, stored as ``skillharness eval`` stores them."""
    store = RunStore.open(exp.config.store)
    try:
        runs = {}
        for arm, answer in (("final", final), ("baseline", chance(0.4, seed=99, samples=samples))):
            provenance = _provenance(f"{eval_id}.{arm}", RunKind.EVAL, exp.pools_sha256, train_run_id)
            runs[arm] = await write_predictions(store, provenance, exp.test, answer, samples)
        rows = compare_groups(exp.test, runs["final"], runs["baseline"], samples=samples)
        report = HoldoutReport(
            eval_id=eval_id,
            purpose="test",
            train_run_id=train_run_id,
            final_run_id=f"{eval_id}.final",
            baseline_run_id=f"{eval_id}.baseline",
            final_bundle_hash="f" * 64,
            baseline_bundle_hash="0" * 64,
            final_label=f"{train_run_id} (v0003)",
            baseline_label=f"{train_run_id} (v0000)",
            pools_sha256=exp.pools_sha256,
            confidence=0.95,
            samples=samples,
            temperature=0.0,
            test_questions=len(exp.test),
            rows=tuple(rows),
            test_pool_runs=1,
        )
        value = report.model_dump(mode="json")
        store.upsert(
            [RunMetric(run_id=r, name=HOLDOUT, value=value) for r in (report.final_run_id, train_run_id)]
        )
        return report
    finally:
        store.close()


def training_run(
    exp: Experiment,
    run_id: str,
    final: Answer | None,
    *,
    epochs: int = 2,
    samples: int = 1,
) -> Written:
    """A finished training run (curves, gates, accepted edits) and, unless ``final`` is None, its holdout."""
    written = asyncio.run(build_training_store(exp.config.store.url, run_id, val_questions(), epochs=epochs))
    # The report builder stores a holdout metric of its own shape: the one `skillharness eval`
    # writes replaces it, and a run never evaluated has none.
    if final is not None:
        asyncio.run(_holdout(exp, run_id, f"eval-{run_id}", final, samples))
    else:
        _drop_holdout(exp, run_id)
    return written


def _drop_holdout(exp: Experiment, run_id: str) -> None:
    """A training run that was never evaluated: no ``holdout`` metric at all."""
    with contextlib.closing(sqlite3.connect(exp.store_path)) as conn, conn:
        conn.execute("DELETE FROM run_metrics WHERE run_id = ? AND name = ?", (run_id, HOLDOUT))


def infer_run(
    exp: Experiment,
    run_id: str,
    answer: Answer,
    *,
    kind: RunKind = RunKind.INFER,
    pools_sha256: str | None = None,
    pool: str = "test",
    samples: int = 1,
    questions: tuple[Question, ...] | None = None,
    parent: str | None = None,
) -> list[Prediction]:
    """An ``infer --pool test`` run (or any run that read a pool itself; with ``parent``, one arm of
    that training run's holdout)."""

    async def write() -> list[Prediction]:
        with RunStore.open(exp.config.store) as store:
            provenance = _provenance(run_id, kind, pools_sha256 or exp.pools_sha256, parent, pool)
            return await write_predictions(store, provenance, questions or exp.test, answer, samples)

    return asyncio.run(write())
