"""Write what a small training run leaves in the store, row by row, for the report tests.

The training loop's step modules are tested on their own; here the store is filled directly with
the rows the loop writes (runs, predictions, gate decisions and observations, dual metric, steps,
diagnoses, run metrics) so the report can be checked against known values.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from report_rows import decision_evidence, documents, observations, provenance, wealth_path, write_run

from skillharness.data import slugify
from skillharness.eval.report.model import ReportData, RunSummary
from skillharness.infer import wilson
from skillharness.skills import Bundle, EditRecord, EditTarget, VersionReason, Workspace, initial_bundle
from skillharness.store import (
    DiagnosisRow,
    DualMetricRow,
    GateDecisionRow,
    GateObservationRow,
    LedgerRecord,
    RunKind,
    RunLog,
    RunMetric,
    RunStatus,
    RunStore,
    TrainStepRow,
)

TASK_TYPES = ("Counting Problem", "OCR Problems", "Action Recognition")
REASONS = ("accept", "reject_evidence", "reject_inertia", "reject_invalid")
USAGE = {
    role: dict(
        zip(
            ("calls", "cache_hits", "errors", "prompt_tokens", "completion_tokens", "cost", "latency_s"),
            v,
            strict=True,
        )
    )
    for role, v in {
        "agent": (812, 40, 2, 90000, 4000, 0.0, 301.5),
        "judge": (57, 3, 0, 30000, 2100, 0.0, 20.0),
        "evolve": (18, 0, 0, 25000, 5200, 0.0, 12.0),
    }.items()
}
# The held-out evaluation's metric, in one plausible shape (the report's adapter reads any).
HOLDOUT = {
    "test": {
        "baseline": {"correct": 9, "n": 20},
        "final": {"correct": 13, "n": 20},
        "paired_difference": {"diff": 0.2, "low": -0.05, "high": 0.45},
        "mcnemar": {"b": 1, "c": 5, "p": 0.21875},
        "agreement": "agree",
    },
    "per_task_type": {
        t: {"baseline": {"correct": 3, "n": 7}, "final": {"correct": 4, "n": 7}} for t in TASK_TYPES
    },
}


@dataclass
class Written:
    """What the builder wrote, for the tests to compare the page against."""

    run_id: str
    val_ids: list[str]
    baseline: tuple[int, int] = (0, 0)
    final: tuple[int, int] | None = None
    decisions: list[GateDecisionRow] = field(default_factory=list)
    observations: dict[int, list[GateObservationRow]] = field(default_factory=dict)
    metrics: dict[str, Any] = field(default_factory=dict)
    steps: list[TrainStepRow] = field(default_factory=list)
    diagnoses: list[DiagnosisRow] = field(default_factory=list)
    workspace: Path | None = None
    baseline_answers: list[tuple[str, str, bool]] = field(default_factory=list)
    final_answers: list[tuple[str, str, bool]] = field(default_factory=list)
    open_log: RunLog | None = None  # the training run's log, left open for an in-progress run
    store: RunStore | None = None


def short_detail(reason: str, draws: int) -> str:
    return f"{reason} after {draws} draws"


@dataclass(frozen=True)
class Shape:
    """What varies between the built runs: the classes, the gates' detail text, the holdout metric."""

    task_types: Sequence[str] = TASK_TYPES
    detail: Callable[[str, int], str] = short_detail
    holdout: Any = field(default_factory=lambda: HOLDOUT)


class TrainingStoreBuilder:
    """Builds one training run's rows; ``finished=False`` stops half-way (an interrupted run)."""

    def __init__(
        self,
        store: RunStore,
        run_id: str,
        val: list[tuple[str, str]],
        *,
        seed: int = 5,
        shape: Shape = Shape(),
    ) -> None:
        self.store, self.run_id, self.val, self.shape = store, run_id, val, shape
        self.rng = random.Random(seed)
        self.written = Written(run_id=run_id, val_ids=[q for q, _ in val])
        self.records: list[LedgerRecord] = []
        self.gate_index = 0
        self.alpha_sum = 0.0
        self.ema = {t: 0.4 for t in shape.task_types}

    async def start(self, status: RunStatus = RunStatus.FINISHED) -> None:
        self.train_log = await self.store.open_run(provenance(self.run_id, RunKind.TRAIN, None, None))
        answers = [(q, t, self.rng.random() < 0.4) for q, t in self.val]
        await write_run(self.store, f"{self.run_id}.baseline", RunKind.INFER, "val", self.run_id, answers)
        self.written.baseline = (sum(1 for a in answers if a[2]), len(answers))
        self.written.baseline_answers = answers
        self.base_class: dict[str, list[int]] = {}
        for _, t, correct in answers:
            cell = self.base_class.setdefault(t, [0, 0])
            cell[0] += int(correct)
            cell[1] += 1

    async def step(
        self, epoch: int, step: int, bundle: Bundle | None, ws: Workspace | None, draws: int
    ) -> Bundle | None:
        roll = f"{self.run_id}.e{epoch}s{step}.roll"
        classes = self.shape.task_types
        batch = [
            (f"train-{epoch}-{step}-{i}", classes[i % len(classes)], self.rng.random() < 0.5)
            for i in range(12)
        ]
        await write_run(self.store, roll, RunKind.INFER, "train", self.run_id, batch)
        wrong = [b for b in batch if not b[2]]
        for q, t, _ in wrong:
            cause = self.rng.choice(["defect", "lapse", "uncertain"])
            row = DiagnosisRow(
                fingerprint=f"fp-{q}",
                run_id=roll,
                question_id=q,
                sample_idx=0,
                task_type=t,
                cause=cause,
                target=f"skill:{slugify(t)}" if cause == "defect" else None,
                reason="judged",
                retryable=False,
            )
            self.records.append(row)
            self.written.diagnoses.append(row)
        candidates = {}
        for k, task_type in enumerate(self.shape.task_types):
            reason = REASONS[(self.gate_index + k) % len(REASONS)]
            bundle = await self._decide(epoch, step, task_type, reason, bundle, ws, draws)
            candidates[f"skill:{slugify(task_type)}"] = "rank"
        summary = {
            "rollout_run": roll,
            "questions": len(batch),
            "correct": len(batch) - len(wrong),
            "waterfall": {"wrong": len(wrong), "defect": 2, "lapse": 1, "excluded": 0},
            "judge_calls": len(wrong),
            "fingerprint_hits": 1,
            "packs": {},
            "candidates": candidates,
            "version_after": "v0000",
        }
        row = TrainStepRow(train_run_id=self.run_id, epoch=epoch, step=step, summary=summary)
        self.records.append(row)
        self.written.steps.append(row)
        return bundle

    async def _decide(
        self,
        epoch: int,
        step: int,
        task_type: str,
        reason: str,
        bundle: Bundle | None,
        ws: Workspace | None,
        draws: int,
    ) -> Bundle | None:
        index, label = self.gate_index, f"skill:{slugify(task_type)}"
        self.gate_index += 1
        base = bundle or initial_bundle()
        after, before_doc, after_doc = documents(base, task_type, f"rule {index} <count & check>")
        version_before = ws.current_version if ws else "v0000"
        version_after = None
        n = 0 if reason == "reject_invalid" else draws
        alpha = 0.0 if n == 0 else 0.05 / (index + 1) ** 2
        self.alpha_sum += alpha
        questions = [self.val[i % len(self.val)][0] for i in range(n)]
        obs = observations(
            self.run_id, index, task_type, questions, wealth_path(self.rng, n, reason == "accept")
        )
        if reason == "accept":
            if ws is not None:
                version_after = ws.commit(
                    after,
                    ws.current_version,
                    EditRecord(target=EditTarget.parse(label), reason=VersionReason.ACCEPTED),
                )
            else:
                version_after = f"v{index + 1:04d}"
            bundle = after
        evidence = decision_evidence(reason, alpha, obs)
        row = GateDecisionRow(
            train_run_id=self.run_id,
            gate_index=index,
            epoch=epoch,
            step=step,
            target=label,
            reason=reason,
            detail=self.shape.detail(reason, n),
            evidence=evidence,
            version_before=version_before,
            version_after=version_after,
            rationale=f"rule {index} <count & check>",
            edits={"skill_update_mode": "rewrite", "edits": [], "rationale": f"rule {index}"},
            document_before=before_doc,
            document_after=None if reason == "reject_invalid" else after_doc,
        )
        dual = self._dual(epoch, step, task_type, index, version_after or version_before)
        self.records += [row, *obs, dual]
        self.written.decisions.append(row)
        self.written.observations[index] = obs
        return bundle

    def _dual(self, epoch: int, step: int, task_type: str, index: int, version: str) -> DualMetricRow:
        self.ema[task_type] = 0.3 * (0.5 + 0.01 * index) + 0.7 * self.ema[task_type]
        correct = self.rng.randrange(len(self.val) // 3, len(self.val))
        return DualMetricRow(
            train_run_id=self.run_id,
            epoch=epoch,
            step=step,
            target=f"skill:{slugify(task_type)}",
            version=version,
            target_correct=correct // 3,
            target_n=len(self.val) // 3,
            val_correct=correct,
            val_n=len(self.val),
            ema=dict(self.ema),
        )

    def epoch_end(self, epoch: int, version: str) -> None:
        correct = self.rng.randrange(len(self.val) // 2, len(self.val))
        value = {
            "epoch": epoch,
            "version": version,
            "correct": correct,
            "n": len(self.val),
            "accuracy": correct / len(self.val),
            "low": wilson(correct, len(self.val))[0],
            "high": wilson(correct, len(self.val))[1],
            "per_class": {},
            "improved": True,
        }
        self.metric(f"epoch_end/{epoch:03d}", value)

    def metric(self, name: str, value: Any) -> None:
        self.records.append(RunMetric(run_id=self.run_id, name=name, value=value))
        self.written.metrics[name] = value

    def _final_class(self, correct: int) -> dict[str, list[int]]:
        """``correct`` spread over the classes, baseline first, then filling up class by class."""
        out = {t: list(v) for t, v in self.base_class.items()}
        left = correct - sum(v[0] for v in out.values())
        for cell in out.values():
            extra = min(max(left, 0), cell[1] - cell[0])
            cell[0] += extra
            left -= extra
        return out

    async def finish(self, version: str, workspace: Path | None, test: list[tuple[str, str]]) -> None:
        final_correct = self.rng.randrange(self.written.baseline[0], len(self.val) + 1)
        self.written.final = (final_correct, len(self.val))
        # the final bundle's val score at the reserved fresh sample, a child run named by its hash;
        # the baseline's fresh run answers as its sample-0 run did (paired with the final's)
        right = set(self.rng.sample(range(len(self.val)), final_correct))
        final_answers = [(q, t, i in right) for i, (q, t) in enumerate(self.val)]
        val_runs = {
            "baseline": f"{self.run_id}.val.fresh.{'0' * 16}",
            "final": f"{self.run_id}.val.fresh.{'f' * 16}",
        }
        for arm, answers in (("baseline", self.written.baseline_answers), ("final", final_answers)):
            await write_run(self.store, val_runs[arm], RunKind.INFER, "val", self.run_id, answers)
        self.written.final_answers = final_answers
        b_correct, n = self.written.baseline
        self.metric(
            "final",
            {
                "workspace": str(workspace or "/nowhere/runs/x/workspace"),
                "version": version,
                "bundle_hash": "f" * 64,
                "state": "finished",
                "stop_reason": "",
                "baseline_run": f"{self.run_id}.baseline",
                "val_runs": val_runs,
            },
        )
        gain = (final_correct - b_correct) / n
        self.metric(
            "val_gain",
            {
                "gain": gain,
                "low": gain - 0.1,
                "high": gain + 0.1,
                "n": float(n),
                "p_value": 0.5,
                "selection": "selected on val (optimistic)",
                "fresh_samples": True,
            },
        )
        self.metric(
            "val_scores",
            {
                "baseline": {"correct": b_correct, "n": n, "per_class": self.base_class},
                "final": {"correct": final_correct, "n": n, "per_class": self._final_class(final_correct)},
            },
        )
        self.metric(
            "alpha_spent",
            {
                "sum": self.alpha_sum,
                "gates": sum(1 for d in self.written.decisions if d.evidence.get("decision")),
                "bound": "run-wide: P(any false accept) <= alpha",
            },
        )
        self.metric("usage", USAGE)
        answers = [(q, t, self.rng.random() < 0.55) for q, t in test]
        await write_run(self.store, f"{self.run_id}.holdout", RunKind.EVAL, "test", self.run_id, answers)
        self.metric("holdout", self.shape.holdout)

    async def close(self, status: RunStatus) -> None:
        self.store.upsert(self.records)
        if status is RunStatus.RUNNING:
            await self.train_log.flush()
            self.written.open_log, self.written.store = self.train_log, self.store
            return
        await self.train_log.close(status)


async def build_training_store(
    store_url: str,
    run_id: str,
    val: list[tuple[str, str]],
    *,
    epochs: int = 2,
    steps: int = 2,
    draws: int = 24,
    status: RunStatus = RunStatus.FINISHED,
    workspace: Path | None = None,
    test: list[tuple[str, str]] | None = None,
    shape: Shape = Shape(),
) -> Written:
    """Write a training run of ``epochs`` x ``steps`` steps, one decision per class each, into the store."""
    store = RunStore.open(store_url)
    builder = TrainingStoreBuilder(store, run_id, val, shape=shape)
    ws = Workspace.create(workspace, initial_bundle()) if workspace is not None else None
    try:
        await builder.start()
        bundle = ws.current() if ws else None
        finished = status is RunStatus.FINISHED
        for epoch in range(1, epochs + 1):
            for step in range(steps):
                bundle = await builder.step(epoch, step, bundle, ws, draws)
            if finished or epoch < epochs:
                builder.epoch_end(epoch, ws.current_version if ws else "v0000")
        if finished:
            await builder.finish(ws.current_version if ws else "v0000", workspace, test or val[:20])
        await builder.close(status)
    finally:
        if status is not RunStatus.RUNNING:
            store.close()
    builder.written.workspace = workspace
    return builder.written


async def finish_open(written: Written) -> None:
    """Close what an in-progress build left open."""
    if written.open_log is not None:
        await written.open_log.close(RunStatus.INTERRUPTED)
    if written.store is not None:
        written.store.close()


def val_questions(n: int = 30, task_types: Sequence[str] = TASK_TYPES) -> list[tuple[str, str]]:
    return [(f"val-{i:03d}", task_types[i % len(task_types)]) for i in range(n)]


def minimal_report_data(run_id: str = "r", **update: Any) -> ReportData:
    """A report of a running run with nothing recorded yet; ``update`` sets any field."""
    run = RunSummary(
        run_id=run_id,
        kind="train",
        status="running",
        pool=None,
        model="m",
        endpoints=("http://x",),
        pools_sha256=None,
        bundle_hash="b",
        config_hash="c",
        package_version="0",
        parent_run_id=None,
        started_at="2026-01-01T00:00:00+00:00",
        ended_at=None,
        wall_s=None,
        n_ok=0,
        n_parse_error=0,
        n_infra_error=0,
    )
    data = ReportData(
        generated_at="now",
        package_version="0",
        store="s",
        run=run,
        children=[],
        partial=True,
        partial_reasons=["run status is running"],
        final=None,
        headlines=[],
        usage=[],
        curves=[],
        epoch_ends=[],
        gates=[],
        alpha_spent=None,
        steps=[],
        diagnoses=[],
        rollouts_by_purpose={},
        task_types=[],
    )
    return data.model_copy(update=update)
