"""Read one training run from the store (read-only) into a :class:`ReportData`.

Everything comes through :class:`skillharness.store.RunReader`; nothing here can write. A run
still in progress or interrupted is read as far as it got and marked partial.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from datetime import UTC, datetime
from typing import Any

from skillharness import __version__
from skillharness.errors import StoreError
from skillharness.eval.report.diff import document_diff
from skillharness.eval.report.holdout import holdout_headline, holdout_rows
from skillharness.eval.report.model import (
    CurvePoint,
    DiagnosisCount,
    EpochEnd,
    GateDraw,
    GateView,
    ReportData,
    RoleUsage,
    RunSummary,
    StepView,
)
from skillharness.eval.report.outages import collect_outages
from skillharness.eval.report.scores import val_by_class, val_headline
from skillharness.eval.report.transfer import transfer_rows
from skillharness.store import (
    DiagnosisRow,
    DualMetricRow,
    GateDecisionRow,
    GateObservationRow,
    RunInfo,
    RunKind,
    RunMetric,
    RunReader,
    TrainStepRow,
)
from skillharness.train import decision_label, stage_ends, untested_calls
from skillharness.train.config import GateConfig

__all__ = ["collect_report", "purpose_of", "summarize_run"]


def _parse_time(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        return None


def summarize_run(info: RunInfo) -> RunSummary:
    """A run's provenance and counts, with its wall time when it has ended."""
    p = info.provenance
    start, end = _parse_time(info.started_at), _parse_time(info.ended_at)
    wall = (end - start).total_seconds() if start and end else None
    return RunSummary(
        run_id=p.run_id,
        kind=p.kind.value,
        status=info.status.value,
        pool=p.pool,
        model=p.model,
        endpoints=p.endpoints,
        pools_sha256=p.pools_sha256,
        bundle_hash=p.bundle_hash,
        config_hash=p.config_hash,
        package_version=p.package_version,
        parent_run_id=p.parent_run_id,
        started_at=info.started_at,
        ended_at=info.ended_at,
        wall_s=wall,
        n_ok=info.n_ok,
        n_parse_error=info.n_parse_error,
        n_infra_error=info.n_infra_error,
    )


def _usage(metrics: dict[str, Any]) -> list[RoleUsage]:
    usage = metrics.get("usage")
    if not isinstance(usage, dict):
        return []
    rows = []
    for role, values in sorted(usage.items()):
        if isinstance(values, dict):
            known = {k: float(v) for k, v in values.items() if k in RoleUsage.model_fields and k != "role"}
            rows.append(RoleUsage(role=role, **known))
    return rows


def _ratio(correct: int, n: int) -> float | None:
    return correct / n if n else None


def _curves(duals: list[DualMetricRow], decisions: list[GateDecisionRow]) -> list[CurvePoint]:
    """dual_metric rows in decision order (the table's key orders targets by name, not time)."""
    order: dict[tuple[int, int, str], GateDecisionRow] = {}
    for d in decisions:
        order[(d.epoch, d.step, d.target)] = d  # the last decision of that target at that cursor
    points = []
    for row in duals:
        decision = order.get((row.epoch, row.step, row.target))
        index = decision.gate_index if decision is not None else 10**9
        points.append((index, row, decision is not None and decision.reason == "accept"))
    points.sort(key=lambda item: (item[0], item[1].epoch, item[1].step))
    return [
        CurvePoint(
            index=i,
            epoch=row.epoch,
            step=row.step,
            target=row.target,
            version=row.version,
            target_accuracy=_ratio(row.target_correct, row.target_n),
            val_accuracy=_ratio(row.val_correct, row.val_n),
            ema=row.ema,
            accepted=accepted,
        )
        for i, (_, row, accepted) in enumerate(points)
    ]


def _epoch_ends(metrics: dict[str, Any]) -> list[EpochEnd]:
    ends = []
    for name, value in sorted(metrics.items()):
        if name.startswith("epoch_end/") and isinstance(value, dict):
            known = {k: v for k, v in value.items() if k in EpochEnd.model_fields}
            ends.append(EpochEnd.model_validate(known))
    return ends


def _gate_view(
    decision: GateDecisionRow, observations: list[GateObservationRow], gate: GateConfig | None
) -> GateView:
    record = decision.evidence.get("decision") or {}
    draws = len(observations)
    ends: list[int] = []
    if gate is not None and draws:
        ends = [
            e for e in stage_ends(gate.first_stage, gate.stage_growth, max(gate.n_max, draws)) if e < draws
        ]

    def num(key: str) -> int:
        return int(record.get(key, 0) or 0)

    threshold = record.get("threshold")
    alpha = float(decision.evidence.get("alpha", 0.0) or 0.0)
    if threshold is None and alpha > 0:
        threshold = 1.0 / alpha
    return GateView(
        gate_index=decision.gate_index,
        epoch=decision.epoch,
        step=decision.step,
        target=decision.target,
        reason=decision_label(decision.reason, decision.evidence),
        untested_calls=untested_calls(decision.evidence),
        detail=decision.detail,
        choice=str(decision.evidence.get("choice") or ""),
        alpha=alpha,
        threshold=float(threshold) if threshold is not None else None,
        draws=draws,
        wins=num("wins"),
        losses=num("losses"),
        ties=num("ties"),
        infra=num("infra"),
        final_wealth=observations[-1].wealth if observations else record.get("wealth"),
        decision_wealth=record.get("wealth", observations[-1].wealth if observations else None),
        decided_at=_decided_at(observations, num("n")) if record else None,
        distinct=_distinct(decision.evidence),
        final_harm_wealth=observations[-1].harm_wealth if observations else record.get("harm_wealth"),
        version_before=decision.version_before,
        version_after=decision.version_after,
        rationale=decision.rationale,
        edits=decision.edits,
        path=[
            GateDraw.model_validate(o.model_dump(include=set(GateDraw.model_fields))) for o in observations
        ],
        stage_ends=ends,
        diff=document_diff(decision.target, decision.document_before, decision.document_after),
        document_before=decision.document_before,
        document_after=decision.document_after,
    )


def _distinct(evidence: dict[str, Any]) -> int | None:
    value = evidence.get("distinct_questions")
    return int(value) if isinstance(value, int | float) else None


def _decided_at(observations: list[GateObservationRow], n: int) -> int | None:
    """The draw index of the ``n``-th paired observation of the target arm: where the ladder decided
    (the rest of its stage was drawn, but the decision rests on these)."""
    seen = 0
    for o in observations:
        if o.arm == "target" and o.candidate is not None and o.incumbent is not None:
            seen += 1
            if seen == n:
                return o.draw_index
    return None


def _gates(reader: RunReader, run_id: str, gate: GateConfig | None) -> list[GateView]:
    by_gate: dict[int, list[GateObservationRow]] = defaultdict(list)
    for obs in reader.ledger(GateObservationRow, train_run_id=run_id):
        by_gate[obs.gate_index].append(obs)
    return [
        _gate_view(d, sorted(by_gate.get(d.gate_index, []), key=lambda o: o.draw_index), gate)
        for d in reader.ledger(GateDecisionRow, train_run_id=run_id)
    ]


def _steps(reader: RunReader, run_id: str) -> list[StepView]:
    views = []
    for row in reader.ledger(TrainStepRow, train_run_id=run_id):
        s = row.summary
        views.append(
            StepView(
                epoch=row.epoch,
                step=row.step,
                questions=int(s.get("questions", 0)),
                correct=int(s.get("correct", 0)),
                waterfall={str(k): int(v) for k, v in (s.get("waterfall") or {}).items()},
                judge_calls=int(s.get("judge_calls", 0)),
                fingerprint_hits=int(s.get("fingerprint_hits", 0)),
                candidates={str(k): str(v) for k, v in (s.get("candidates") or {}).items()},
            )
        )
    return views


def _diagnoses(reader: RunReader, run_id: str) -> list[DiagnosisCount]:
    """Judged wrong answers of this run's rollouts, counted by rollout run, task type and verdict."""
    counts: Counter[tuple[str, str, str]] = Counter()
    for row in reader.ledger(DiagnosisRow):
        if row.run_id.startswith(f"{run_id}.") and not row.retryable:
            counts[(row.run_id, row.task_type, row.cause)] += 1
    return [DiagnosisCount(run_id=r, task_type=t, cause=c, n=n) for (r, t, c), n in sorted(counts.items())]


def purpose_of(run_id: str, info: RunSummary) -> str:
    """What a child run was for: baseline, rollout (diagnosis and evolution), gate, val score, eval."""
    suffix = run_id.rsplit(".", 1)[-1] if "." in run_id else ""
    if info.kind == "gate" or suffix in ("cand", "inc"):
        return "gate"
    if suffix == "roll":
        return "rollout"
    if suffix == "baseline":
        return "baseline"
    if ".val.fresh." in run_id:
        return "final val score (fresh samples)"
    if ".val." in run_id:
        return "val score"
    if info.kind == "eval" or info.pool == "test":
        return "eval"
    return "other"


# What a stop's final records of the moment it stopped; a resume trains past it.
_AT_THE_STOP = ("version", "bundle_hash", "state", "stop_reason", "open_candidates")
_STOPPED_BY = {"budget": "by its budget", "stop_file": "by its stop file", "interrupted": "by an interrupt"}


def resumed_past_its_stop(run: RunSummary, final: dict[str, Any] | None) -> bool:
    """A stop's final (budget, stop file, Ctrl-C) on a run stored as running: a resume has trained
    past that stop and has not stopped since (it is running, or was killed), so what the final
    recorded of the stop (its version, open tests) no longer holds."""
    return bool(final) and final.get("stop", "end") != "end" and run.status == "running"


def current_final(
    run: RunSummary, final: dict[str, Any] | None, curves: list[CurvePoint]
) -> dict[str, Any] | None:
    """The run's final as it stands: a final that a resume trained past loses what it recorded of
    its stop, and its version is the last decision's (the oracle reads that one, not the stop's)."""
    if final is None or not resumed_past_its_stop(run, final):
        return final
    kept = {key: value for key, value in final.items() if key not in _AT_THE_STOP}
    return {**kept, "version": curves[-1].version} if curves else kept


def _partial_reasons(run: RunSummary, metrics: dict[str, Any]) -> list[str]:
    reasons = []
    if run.status != "finished":
        reasons.append(f"run status is {run.status}")
    final = metrics.get("final") or {}
    stop = final.get("stop", "end")
    if "final" not in metrics:
        reasons.append("no final metric: training did not finish")
    elif resumed_past_its_stop(run, final):
        reasons.append(
            f"resumed after it stopped {_STOPPED_BY.get(stop, f'({stop})')} and not stopped since: "
            "still running, or killed (a resume goes on); the figures of that stop no longer hold"
        )
    elif stop != "end":
        more = "a resume with a larger budget goes on" if stop == "budget" else "a resume goes on"
        reasons.append(
            f"stopped {_STOPPED_BY.get(stop, f'({stop})')} with {final.get('open_candidates', 0)} "
            f"test(s) open and no final val score; {more}"
        )
    return reasons


def _finite(value: Any) -> Any:
    """JSON-safe: NaN and infinities become None (the JSON file is strict)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def _training_run(reader: RunReader, run_id: str) -> RunInfo:
    """Run ``run_id``'s record; StoreError if there is none, or it is not a training run."""
    info = reader.run(run_id)
    if info.provenance.kind is not RunKind.TRAIN:
        parent = (
            f", part of training run {info.provenance.parent_run_id!r}"
            if info.provenance.parent_run_id
            else ""
        )
        raise StoreError(
            f"run {run_id!r} is {_article(info.provenance.kind.value)} run{parent}, not a training run; "
            f"the report reads training runs (`skillharness runs show {run_id}` shows this one)",
            run_id=run_id,
        )
    return info


def _article(word: str) -> str:
    return f"{'an' if word[:1] in 'aeiou' else 'a'} {word}"


def collect_report(
    reader: RunReader,
    run_id: str,
    *,
    store: str = "",
    gate: GateConfig | None = None,
    confidence: float = 0.95,
) -> ReportData:
    """Everything the report shows about training run ``run_id``; StoreError if it does not exist or
    is not a training run."""
    info = _training_run(reader, run_id)
    run = summarize_run(info)
    children = [summarize_run(info) for info in reader.children(run_id)]
    metrics = {m.name: m.value for m in reader.ledger(RunMetric, run_id=run_id)}
    run = run.model_copy(update={"replica_changes": tuple(reader.replica_changes(run_id))})
    decisions = reader.ledger(GateDecisionRow, train_run_id=run_id)
    curves = _curves(reader.ledger(DualMetricRow, train_run_id=run_id), decisions)
    # The holdout is the headline; the val gain was selected on val and comes after it.
    test = holdout_headline(metrics.get("holdout"), confidence)
    headlines = [h for h in (test, val_headline(reader, run_id, metrics, confidence)) if h is not None]
    rollouts: Counter[str] = Counter()
    for child in children:
        rollouts[purpose_of(child.run_id, child)] += child.n_ok + child.n_parse_error + child.n_infra_error
    task_types = sorted({t for point in curves for t in point.ema})
    reasons = _partial_reasons(run, metrics)
    return ReportData(
        generated_at=datetime.now(UTC).isoformat(timespec="seconds"),
        package_version=__version__,
        store=store,
        run=run,
        children=children,
        partial=bool(reasons),
        partial_reasons=reasons,
        final=current_final(run, metrics.get("final"), curves),
        headlines=headlines,
        val_by_class=val_by_class(metrics, confidence),
        usage=_usage(metrics),
        outages=collect_outages(reader, run_id, run.started_at),
        curves=curves,
        epoch_ends=_epoch_ends(metrics),
        gates=_gates(reader, run_id, gate),
        alpha_spent=metrics.get("alpha_spent"),
        budget=metrics.get("budget"),
        steps=_steps(reader, run_id),
        diagnoses=_diagnoses(reader, run_id),
        holdout_raw=_finite(metrics.get("holdout")),
        holdout_rows=holdout_rows(metrics.get("holdout"), confidence=confidence),
        transfer=transfer_rows(metrics),
        rollouts_by_purpose=dict(sorted(rollouts.items())),
        task_types=task_types,
    )
