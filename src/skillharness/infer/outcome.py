"""How a run ended, from its answers: finished, finished with errors, or failed.

A run that stored an answer for every question is not necessarily a run that worked: an
unreachable endpoint, an unreadable video or a full disk turns every question into an
``infra_error`` row. The outcome looks at the share of such rows: past ``infer.max_infra_share``
the run failed (non-zero exit, counts by error class); below it, it finished with errors and the
message says how to ask those questions again.

A request the server refused for its size (error class ``RequestRefused``: a body, image or token
limit below the run's requests) is such a row too, never a wrong answer, and is named apart: by
HTTP status, endpoint and the limit it most likely hit, with what to change. Past
``infer.max_refused_share`` of the questions the run failed, whatever its other errors: a server
that refuses the run's requests scores nothing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from skillharness.agent.records import Prediction, PredictionStatus
from skillharness.agent.refusal import Refusal, refusal_of
from skillharness.errors import AuthError
from skillharness.infer.config import InferConfig
from skillharness.llm import REFUSAL_LIMITS
from skillharness.store import RunStatus

__all__ = ["RunOutcome", "decide_outcome", "refusal_summary", "single_error", "stop_on_auth"]


@dataclass(frozen=True)
class RunOutcome:
    """The run's final status and the infra errors behind it."""

    status: RunStatus
    total: int
    infra_errors: int
    by_class: dict[str, int]
    max_share: float
    refused: dict[Refusal, int] = field(default_factory=dict)  # refused requests by cause
    max_refused_share: float = InferConfig().max_refused_share

    @property
    def share(self) -> float:
        return self.infra_errors / self.total if self.total else 0.0

    @property
    def refused_share(self) -> float:
        return sum(self.refused.values()) / self.total if self.total else 0.0

    def describe(self, run_id: str) -> str:
        """One paragraph for the user: what happened and what to do next."""
        if self.status is RunStatus.FINISHED:
            return f"run {run_id} finished: every question has a final answer"
        classes = ", ".join(f"{name} {n}" for name, n in sorted(self.by_class.items(), key=lambda kv: -kv[1]))
        head = f"{self.infra_errors} of {self.total} answers ({self.share:.0%}) are infra errors ({classes})"
        if self.refused:
            head += f"; {refusal_summary(self.refused, self.total)}"
        retry = f"skillharness infer --resume --run-id {run_id} (with the same config) asks them again"
        if self.status is RunStatus.FAILED:
            over = (
                f"more than infer.max_refused_share = {self.max_refused_share:g} refused"
                if self.refused_share > self.max_refused_share
                else f"more than infer.max_infra_share = {self.max_share:g}"
            )
            return f"run {run_id} failed: {head}, {over}. Fix the cause, then {retry}"
        return f"run {run_id} finished with errors: {head}; {retry}"


def refusal_summary(refused: Mapping[Refusal, int], asked: int) -> str:
    """``3 of 36 requests refused by the server (HTTP 413 from gpu-a ×3): the likely limit is ...``."""
    count = sum(refused.values())
    causes = ", ".join(f"{r.label} ×{n}" for r, n in sorted(refused.items(), key=lambda kv: -kv[1]))
    limits = sorted({r.limit for r in refused})
    advice = "; ".join(f"{key}: {REFUSAL_LIMITS.get(key, REFUSAL_LIMITS['unknown'])}" for key in limits)
    return (
        f"{count} of {asked} refused by the server ({causes}), none scored as an answer; "
        f"the likely limit: {advice}"
    )


def decide_outcome(
    predictions: Iterable[Prediction],
    total: int,
    max_share: float,
    max_refused_share: float = InferConfig().max_refused_share,
) -> RunOutcome:
    """The outcome of a run whose stored predictions are ``predictions`` out of ``total`` pairs.

    Pairs never reached count as infra errors too (class ``not_asked``): a run that stopped early
    has not answered them. Refused requests are infra errors counted by cause as well; past
    ``max_refused_share`` of ``total`` they fail the run on their own.
    """
    by_class: Counter[str] = Counter()
    refused: Counter[Refusal] = Counter()
    stored = 0
    for prediction in predictions:
        stored += 1
        if prediction.status is PredictionStatus.INFRA_ERROR:
            by_class[prediction.error_class or "unknown"] += 1
        refusal = refusal_of(prediction)
        if refusal is not None:
            refused[refusal] += 1
    if total > stored:
        by_class["not_asked"] += total - stored
    infra = sum(by_class.values())
    if infra == 0:
        status = RunStatus.FINISHED
    elif total and (infra / total > max_share or sum(refused.values()) / total > max_refused_share):
        status = RunStatus.FAILED
    else:
        status = RunStatus.FINISHED_WITH_ERRORS
    return RunOutcome(status, total, infra, dict(by_class), max_share, dict(refused), max_refused_share)


def refused_credentials(prediction: Prediction) -> bool:
    """The answer an endpoint refused for credentials: it stops the run (:func:`stop_on_auth`)."""
    return prediction.status is PredictionStatus.INFRA_ERROR and prediction.error_class == AuthError.__name__


def stop_on_auth(on_done: Callable[[Prediction], None]) -> Callable[[Prediction], None]:
    """``on_done`` that stops the run at the first answer an endpoint refused for credentials.

    Asking the other questions would only record the same refusal against each of them; the
    prediction is already stored as an infra error, so ``--resume`` asks it again once fixed.
    """

    def check(prediction: Prediction) -> None:
        on_done(prediction)
        if refused_credentials(prediction):
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
