"""How a run ended, from its answers: finished, finished with errors, or failed.

A run that stored an answer for every question is not necessarily a run that worked: an
unreachable endpoint, an unreadable video or a full disk turns every question into an
``infra_error`` row. The outcome looks at the share of such rows: past ``infer.max_infra_share``
the run failed (non-zero exit, counts by error class); below it, it finished with errors and the
message says how to ask those questions again.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from skillharness.agent.records import Prediction, PredictionStatus
from skillharness.errors import AuthError
from skillharness.store import RunStatus

__all__ = ["RunOutcome", "decide_outcome", "single_error", "stop_on_auth"]


@dataclass(frozen=True)
class RunOutcome:
    """The run's final status and the infra errors behind it."""

    status: RunStatus
    total: int
    infra_errors: int
    by_class: dict[str, int]
    max_share: float

    @property
    def share(self) -> float:
        return self.infra_errors / self.total if self.total else 0.0

    def describe(self, run_id: str) -> str:
        """One paragraph for the user: what happened and what to do next."""
        if self.status is RunStatus.FINISHED:
            return f"run {run_id} finished: every question has a final answer"
        classes = ", ".join(f"{name} {n}" for name, n in sorted(self.by_class.items(), key=lambda kv: -kv[1]))
        head = f"{self.infra_errors} of {self.total} answers ({self.share:.0%}) are infra errors ({classes})"
        retry = f"skillharness infer --resume --run-id {run_id} (with the same config) asks them again"
        if self.status is RunStatus.FAILED:
            return (
                f"run {run_id} failed: {head}, more than infer.max_infra_share = {self.max_share:g}. "
                f"Fix the cause, then {retry}"
            )
        return f"run {run_id} finished with errors: {head}; {retry}"


def decide_outcome(predictions: Iterable[Prediction], total: int, max_share: float) -> RunOutcome:
    """The outcome of a run whose stored predictions are ``predictions`` out of ``total`` pairs.

    Pairs never reached count as infra errors too (class ``not_asked``): a run that stopped early
    has not answered them.
    """
    by_class: Counter[str] = Counter()
    stored = 0
    for prediction in predictions:
        stored += 1
        if prediction.status is PredictionStatus.INFRA_ERROR:
            by_class[prediction.error_class or "unknown"] += 1
    if total > stored:
        by_class["not_asked"] += total - stored
    infra = sum(by_class.values())
    if infra == 0:
        status = RunStatus.FINISHED
    elif total and infra / total > max_share:
        status = RunStatus.FAILED
    else:
        status = RunStatus.FINISHED_WITH_ERRORS
    return RunOutcome(status, total, infra, dict(by_class), max_share)


def stop_on_auth(on_done: Callable[[Prediction], None]) -> Callable[[Prediction], None]:
    """``on_done`` that stops the run at the first answer an endpoint refused for credentials.

    Asking the other questions would only record the same refusal against each of them; the
    prediction is already stored as an infra error, so ``--resume`` asks it again once fixed.
    """

    def check(prediction: Prediction) -> None:
        on_done(prediction)
        if prediction.status is PredictionStatus.INFRA_ERROR and prediction.error_class == AuthError.__name__:
            raise AuthError(
                f"stopped the run: {prediction.error_message}. Fix the key, then resume with --resume",
                kind="auth_stop",
                question_id=prediction.question_id,
            )

    return check


def single_error(group: BaseExceptionGroup[BaseException]) -> BaseException:
    """The one error a batch stopped for (a TaskGroup wraps it in a group; the others are echoes).

    A stop (an auth failure) is preferred over the cancellations it caused in the other workers.
    """
    leaves: list[BaseException] = []

    def walk(error: BaseException) -> None:
        if isinstance(error, BaseExceptionGroup):
            for inner in error.exceptions:
                walk(inner)
        else:
            leaves.append(error)

    walk(group)
    for leaf in leaves:
        if isinstance(leaf, AuthError):
            return leaf
    return leaves[0] if leaves else group
