"""Two runs compared on the same sealed test pool: B − A, paired by question, by video.

A side is a training run (its latest holdout: the final arm's predictions), or a run that read
the test pool itself (an eval arm, or ``infer --pool test``, e.g. a reference protocol). Nothing
is asked again: the comparison reads stored predictions (read-only) and reuses the holdout's
statistics (:func:`skillharness.eval.tables.compare_groups`), with B in the "final" seat and A in
the "baseline" seat. Two runs are compared only on the same split and the same
``(question, sample)`` draws; anything else is refused, saying what differs.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from pydantic import ValidationError

from skillharness.data import Pool
from skillharness.errors import ConfigError, StoreError
from skillharness.eval.compare_report import ComparedRun, CompareRow, RunComparison
from skillharness.eval.holdout_plan import TestPool
from skillharness.eval.holdout_report import HoldoutReport
from skillharness.eval.ledger import HOLDOUT, EvalArm, arm_run_id, count_test_pool_runs
from skillharness.eval.tables import compare_groups
from skillharness.store import Prediction, RunInfo, RunKind, RunMetric, RunReader
from skillharness.util.model import describe_validation

__all__ = ["compare_runs", "compared_run"]

_EXAMPLES = 5  # ids named in a refusal: enough to find the gap, short enough to read


def _holdout(reader: RunReader, info: RunInfo) -> HoldoutReport:
    run_id = info.run_id
    found = reader.ledger(RunMetric, run_id=run_id, name=HOLDOUT)
    if not found:
        started = {r.run_id for r in reader.children(run_id)} & {
            arm_run_id(f"{run_id}.holdout", EvalArm.FINAL)
        }
        how = (
            f"its end-of-training holdout was cut short: `skillharness train --config EXPERIMENT --resume "
            f"{run_id}` finishes it on the same answers (no new read of the test pool)"
            if started
            else f"`skillharness eval --config EXPERIMENT --run {run_id}` evaluates it (training does so "
            "when it ends with eval.run_holdout_eval: true)"
        )
        raise ConfigError(
            f"run {run_id!r} is a training run with no holdout on the test pool: {how}", run_id=run_id
        )
    try:
        return HoldoutReport.model_validate(found[0].value)
    except ValidationError as exc:
        raise StoreError(
            f"run {run_id!r}: its stored holdout is malformed: {describe_validation(exc)}", run_id=run_id
        ) from exc


def compared_run(reader: RunReader, run_id: str) -> ComparedRun:
    """The run ``run_id`` stands for on the test pool; ConfigError when it has no test predictions."""
    info = reader.run(run_id)  # StoreError naming the known runs
    kind = info.provenance.kind
    report = None
    if kind is RunKind.TRAIN:
        report = _holdout(reader, info)
        source = reader.run(report.final_run_id)
    elif kind in (RunKind.EVAL, RunKind.INFER):
        source = info
    else:
        raise ConfigError(
            f"run {run_id!r} is a {kind} run: compare training runs with a holdout, eval runs or "
            "infer runs of the test pool",
            run_id=run_id,
        )
    if source.provenance.pool != Pool.TEST or source.provenance.pools_sha256 is None:
        raise ConfigError(
            f"run {source.run_id!r} ran on pool {source.provenance.pool or '(none)'}, not a split's "
            "test pool: only test-pool predictions are compared (`skillharness infer --pool test` "
            "or `skillharness eval` write them)",
            run_id=run_id,
        )
    return ComparedRun(
        run_id=run_id,
        kind=kind.value,
        predictions_run_id=source.run_id,
        eval_id=report.eval_id if report else None,
        label=report.final_label if report else run_id,
        bundle_hash=source.provenance.bundle_hash,
        pools_sha256=source.provenance.pools_sha256,
        status=source.status.value,
    )


def _check_splits(a: ComparedRun, b: ComparedRun, pool: TestPool) -> None:
    if a.predictions_run_id == b.predictions_run_id:
        raise ConfigError(
            f"runs {a.run_id!r} and {b.run_id!r} both stand for the predictions of "
            f"{a.predictions_run_id!r}: there is nothing to compare",
            run_id=a.run_id,
        )
    if a.pools_sha256 != b.pools_sha256:
        raise ConfigError(
            f"runs {a.run_id!r} and {b.run_id!r} read different splits' test pools: pools sha256 "
            f"{a.pools_sha256[:12]} ({a.predictions_run_id}) against {b.pools_sha256[:12]} "
            f"({b.predictions_run_id}); only runs on one pools.json can be paired",
            run_id=b.run_id,
        )
    if a.pools_sha256 != pool.pools_sha256:
        raise ConfigError(
            f"runs {a.run_id!r} and {b.run_id!r} read the test pool of pools sha256 "
            f"{a.pools_sha256[:12]}, but this config's pools.json has {pool.pools_sha256[:12]}: "
            "compare them with their own experiment's config",
            run_id=a.run_id,
        )


def _examples(keys: Iterable[object]) -> str:
    shown = sorted(keys, key=str)
    text = ", ".join(str(k) for k in shown[:_EXAMPLES])
    return f"{text}, ..." if len(shown) > _EXAMPLES else text or "none"


def _differs(
    what: str, a: ComparedRun, b: ComparedRun, in_a: Collection[object], in_b: Collection[object]
) -> str:
    only_a, only_b = set(in_a) - set(in_b), set(in_b) - set(in_a)
    return (
        f"runs {a.run_id!r} and {b.run_id!r} were not asked the same {what}: "
        f"{a.predictions_run_id} holds {len(in_a)}, {b.predictions_run_id} {len(in_b)}; "
        f"{len(only_a)} only in {a.run_id!r} ({_examples(only_a)}), "
        f"{len(only_b)} only in {b.run_id!r} ({_examples(only_b)}). A run that stopped early is "
        "completed by resuming it (`skillharness eval --eval-id ID`, `skillharness infer --resume`)"
    )


def _check_draws(a: ComparedRun, b: ComparedRun, preds_a: list[Prediction], preds_b: list[Prediction]) -> int:
    """The samples per question, once both runs are known to hold the same draws."""
    questions_a = {p.question_id for p in preds_a}
    questions_b = {p.question_id for p in preds_b}
    if questions_a != questions_b:
        raise ConfigError(_differs("test questions", a, b, questions_a, questions_b), run_id=b.run_id)
    keys_a = {(p.question_id, p.sample_idx) for p in preds_a}
    keys_b = {(p.question_id, p.sample_idx) for p in preds_b}
    if keys_a != keys_b:
        raise ConfigError(_differs("samples (question, index)", a, b, keys_a, keys_b), run_id=b.run_id)
    if not questions_a:
        raise ConfigError(f"run {a.predictions_run_id!r} holds no prediction yet", run_id=a.run_id)
    return len({p.sample_idx for p in preds_a})


def _rows(
    pool: TestPool,
    asked: set[str],
    preds_a: list[Prediction],
    preds_b: list[Prediction],
    *,
    samples: int,
    confidence: float,
) -> tuple[CompareRow, ...]:
    questions = [q for q in pool.questions if q.question_id in asked]
    outside = asked - {q.question_id for q in questions}
    if outside:
        # Same pools.json, yet ids it does not hold: the questions file was changed since.
        raise ConfigError(
            f"{len(outside)} compared question(s) are not in this config's test pool ({_examples(outside)})",
            key="data.questions",
        )
    # B sits in the "final" seat and A in the "baseline" one: every difference reads B − A.
    rows = compare_groups(questions, preds_b, preds_a, samples=samples, confidence=confidence)
    return tuple(
        CompareRow(grouping=r.grouping, label=r.label, a=r.baseline, b=r.final, paired=r.paired) for r in rows
    )


def compare_runs(
    reader: RunReader, pool: TestPool, run_a: str, run_b: str, *, confidence: float = 0.95
) -> RunComparison:
    """Run B against run A on the test pool: B − A by video, per question beside it, McNemar.

    Args:
        reader: the run store, read-only.
        pool: the config's sealed test pool (:func:`skillharness.eval.load_test_pool`): the split
            both runs must have read, and the questions' videos (the clusters) and task types.
        run_a: the reference run; run_b: the run compared with it.
        confidence: the intervals' level.

    Raises:
        ConfigError: a run has no test-pool predictions (a training run without a holdout says
            which command writes one), or the two runs differ in split, questions or samples.
    """
    a, b = compared_run(reader, run_a), compared_run(reader, run_b)
    _check_splits(a, b, pool)
    preds_a = reader.predictions(a.predictions_run_id)
    preds_b = reader.predictions(b.predictions_run_id)
    samples = _check_draws(a, b, preds_a, preds_b)
    asked = {p.question_id for p in preds_a}
    rows = _rows(pool, asked, preds_a, preds_b, samples=samples, confidence=confidence)
    evals, others = count_test_pool_runs(reader.runs(), pool.pools_sha256)
    return RunComparison(
        a=a,
        b=b,
        pools_sha256=pool.pools_sha256,
        confidence=confidence,
        samples=samples,
        questions=len(asked),
        rows=rows,
        test_pool_runs=evals,
        test_pool_other_runs=others,
    )
