"""Infrastructure failures never become training decisions (the outage rule).

An answer that failed on infrastructure (``infra_error``: the retry policy gave up, the breaker
stayed open) says nothing about a bundle. Each training rollout therefore asks such draws again
(``train.infra_retries`` times), and when what is left still passes ``infer.max_infra_share`` of
the rollout, or nothing at all was answered, the run stops *resumably* before anything is decided
from it: no gate records a ``reject_inertia`` for want of answers, no val score of n = 0 enters the
EMA or ``dual_metric``, and no diagnosis is cut short. A resume starts at the same cursor and asks
the failed draws again; every answer already stored is read back, so the decisions are the ones an
uninterrupted run makes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from skillharness.agent.records import Prediction, PredictionStatus
from skillharness.train.state.budget import TrainingStopped

__all__ = ["InfraOutage", "check_infra"]


class InfraOutage(TrainingStopped):
    """Training stopped because the endpoint could not give the evidence a step needs (resumable).

    ``context`` holds ``what`` (the child run), ``failed``, ``asked``, ``limit`` and ``errors``
    (error class → count).
    """


def check_infra(predictions: Sequence[Prediction], *, what: str, limit: float, retries: int) -> None:
    """Raise :class:`InfraOutage` when ``predictions`` (after ``retries``) are an outage, not noise."""
    failed = [p for p in predictions if p.status is PredictionStatus.INFRA_ERROR]
    if not failed:
        return
    asked = len(predictions)
    if len(failed) < asked and len(failed) / asked <= limit:
        return
    errors = Counter(p.error_class or "unknown" for p in failed)
    example = next((p.error_message for p in failed if p.error_message), "")
    kinds = ", ".join(f"{name} ×{n}" for name, n in errors.most_common())
    raise InfraOutage(
        f"{what}: {len(failed)} of {asked} answers failed on infrastructure after {retries} "
        f"re-ask(s) (more than infer.max_infra_share {limit:.0%}): {kinds}"
        + (f"; e.g. {example[:200]}" if example else "")
        + "; nothing was decided from them, and a resume asks them again",
        reason="infra_outage",
        what=what,
        failed=len(failed),
        asked=asked,
        limit=limit,
        errors=dict(errors),
    )
