"""Requests the server refused are counted and never learned from; too many stop the run.

A refused agent request (``RequestRefused``, :mod:`skillharness.agent.refusal`: a body, image or
``max_tokens`` limit of the server below the run's requests) is no answer. Scoring it wrong would
turn a misconfigured server into "an agent that is always wrong", and a server that refuses only
long conversations into a lesson: candidates that fetch fewer frames would win their gates. So a
refused draw is excluded like INFRA (a gate skips it, a val score leaves it out, diagnosis never
sees it), and counted here: by arm (baseline, step rollout, a gate's incumbent and candidate, val
scores) in the run's ``final`` metrics, and per role in the usage (``refused``).

Unlike a transport failure it is not asked again at once: the same request meets the same limit,
and re-sampling it at temperature > 0 would keep exactly the shorter conversations that pass. A
resume asks it again (the server may have been fixed).

The run stops (:class:`RequestsRefused`, resumable once the server is fixed) when the refused share
of every agent draw asked so far passes ``infer.max_refused_share``, checked after every rollout:
the baseline on val is the first, so a server that refuses every request stops the run there,
naming the HTTP status, the endpoint and the likely limit.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from skillharness.agent import Prediction, Refusal, refusal_of
from skillharness.llm import REFUSAL_LIMITS
from skillharness.train.state.budget import TrainingStopped

__all__ = ["RefusalTally", "RequestsRefused", "arm_of", "check_refusals"]


class RequestsRefused(TrainingStopped):
    """Training stopped: the server refuses too many of the run's agent requests (a limit set below
    them). Resumable once the limit is fixed.

    ``context`` holds ``what`` (the child run), ``refused`` and ``asked`` (every agent draw so far),
    ``limit`` (``infer.max_refused_share``), ``by_arm``, ``causes`` (label → count), and the most
    common cause's ``status``, ``endpoint`` and ``likely_limit``.
    """


def arm_of(suffix: str) -> str:
    """The arm a training child run's suffix names: what its refusals are counted under."""
    if suffix.endswith(".inc"):
        return "incumbent"
    if suffix.endswith(".cand"):
        return "candidate"
    if suffix.endswith(".roll"):
        return "rollout"
    return "baseline" if suffix == "baseline" else "val"


@dataclass
class RefusalTally:
    """Every agent draw a run asked and whether the server refused it, each (child run, question,
    sample) once however often it was asked (mutable: one per training context)."""

    _draws: dict[tuple[str, str, int], tuple[str, Refusal | None]] = field(default_factory=dict)

    def add(self, arm: str, predictions: Sequence[Prediction]) -> None:
        """Count ``predictions`` of one rollout under ``arm`` (a later answer replaces a refusal)."""
        for p in predictions:
            self._draws[p.key] = (arm, refusal_of(p))

    @property
    def asked(self) -> int:
        return len(self._draws)

    @property
    def refused(self) -> int:
        return sum(1 for _, refusal in self._draws.values() if refusal is not None)

    def causes(self) -> Counter[Refusal]:
        return Counter(refusal for _, refusal in self._draws.values() if refusal is not None)

    def by_arm(self) -> dict[str, dict[str, int]]:
        """``{arm: {"asked": n, "refused": k}}``."""
        out: dict[str, dict[str, int]] = {}
        for arm, refusal in self._draws.values():
            cell = out.setdefault(arm, {"asked": 0, "refused": 0})
            cell["asked"] += 1
            cell["refused"] += refusal is not None
        return out

    def record(self) -> dict[str, Any]:
        """What the run's metrics keep: totals, per arm, and per cause."""
        return {
            "asked": self.asked,
            "refused": self.refused,
            "by_arm": self.by_arm(),
            "causes": {r.label: n for r, n in self.causes().most_common()},
        }


def check_refusals(tally: RefusalTally, *, what: str, limit: float) -> None:
    """Raise :class:`RequestsRefused` when the run's refused share (``tally``) passes ``limit``."""
    refused, asked = tally.refused, tally.asked
    if not refused or refused / asked <= limit:
        return
    causes = tally.causes()
    top = causes.most_common(1)[0][0]
    listed = ", ".join(f"{r.label} ×{n}" for r, n in causes.most_common())
    advice = REFUSAL_LIMITS.get(top.limit, REFUSAL_LIMITS["unknown"])
    raise RequestsRefused(
        f"{what}: the server refused {refused} of the {asked} agent requests asked so far "
        f"(more than infer.max_refused_share {limit:.0%}): {listed}. Likely limit: {advice}. "
        "No refused request was scored as an answer; fix the limit, then resume",
        reason="requests_refused",
        what=what,
        refused=refused,
        asked=asked,
        limit=limit,
        by_arm=tally.by_arm(),
        causes={r.label: n for r, n in causes.most_common()},
        status=top.status,
        endpoint=top.endpoint,
        likely_limit=top.limit,
    )
