"""The transfer of a gain: the two bundles of an evaluation, asked again under a reference protocol.

Our agent's gain is measured with our own request (tools, several turns). Whether the skills
carry over to the evaluation the field reports is a second question: each protocol in
``eval.protocols`` (or ``eval --protocol``) runs both bundles on the same sealed test pool with
the reference's own request and the bundle's text in the one place that reference lets its user
put instructions (``agent.protocol_bundle_slot: auto``, docs/protocols.md). The comparison is
the holdout's: paired by (question, sample), the interval by video, the paired test. Each
protocol is its own evaluation (``<eval id>.<protocol>``, counted among the test pool's reads)
and its report is stored as ``transfer.<protocol>``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from skillharness.agent import BundleSlot, ProtocolName
from skillharness.errors import ConfigError
from skillharness.eval.holdout import run_holdout
from skillharness.eval.holdout_plan import Arm, HoldoutSettings
from skillharness.eval.holdout_report import HoldoutReport
from skillharness.eval.ledger import EvalArm, arm_run_id, transfer_metric
from skillharness.infer import InferProgress, check_agent_slot
from skillharness.skills import Bundle
from skillharness.store import RunStore, run_id_problem

__all__ = ["TransferSettings", "check_eval_id", "check_transfers", "run_transfers", "under_protocol"]

# The store's rule for a run id (pattern, length), which every arm's run id must meet.


class TransferSettings(HoldoutSettings, Protocol):
    """A holdout config that can be copied with another agent section (``Config`` is one)."""

    def model_copy(self, *, update: dict[str, Any] | None = None, deep: bool = False) -> Any: ...


def under_protocol(config: TransferSettings, protocol: ProtocolName) -> TransferSettings:
    """``config`` asking with ``protocol``'s request, the bundle in that protocol's own slot."""
    if protocol is ProtocolName.SKILLHARNESS:
        raise ConfigError(
            "a transfer is measured under a reference protocol: lmms_eval | vlmevalkit | official"
        )
    agent = config.agent.model_copy(update={"protocol": protocol, "protocol_bundle_slot": BundleSlot.AUTO})
    return config.model_copy(update={"agent": agent})


def check_transfers(
    config: TransferSettings, protocols: Sequence[ProtocolName]
) -> dict[ProtocolName, TransferSettings]:
    """Each protocol's config, its slot checked: a protocol without one (the official prompt) stops
    the command before any test question is asked, in our agent or under another protocol."""
    configs = {protocol: under_protocol(config, protocol) for protocol in dict.fromkeys(protocols)}
    for changed in configs.values():
        check_agent_slot(changed.agent, changed.data.benchmark)
    return configs


async def run_transfers(
    config: TransferSettings,
    final: Bundle | Arm,
    baseline: Bundle | Arm,
    protocols: Sequence[ProtocolName],
    *,
    eval_id: str,
    train_run_id: str | None,
    purpose: str,
    store: RunStore | None = None,
    progress: InferProgress | None = None,
) -> dict[ProtocolName, HoldoutReport]:
    """Both bundles under each of ``protocols``, one evaluation each (``<eval_id>.<protocol>``),
    every protocol's slot checked before the first one runs."""
    reports = {}
    for protocol, changed in check_transfers(config, protocols).items():
        reports[protocol] = await run_holdout(
            changed,
            final,
            baseline,
            train_run_id=train_run_id,
            purpose=f"{purpose} (transfer: {protocol.value})",
            eval_id=_transfer_id(eval_id, protocol),
            store=store,
            progress=progress,
            metric=transfer_metric(protocol.value),
        )
    return reports


def _transfer_id(eval_id: str, protocol: ProtocolName) -> str:
    """The evaluation of one protocol's transfer: ``<eval id>.<protocol>``."""
    return f"{eval_id}.{protocol.value}"


def check_eval_id(eval_id: str, protocols: Sequence[ProtocolName], *, ours: bool = True) -> None:
    """Every run id the evaluation will write is valid, checked before the first arm asks anything:
    our agent's arms (``ours``) and each transfer's, whose longer ids a long ``eval_id`` can push past
    the store's limit after our agent's holdout has already read the test pool."""
    evaluations = [eval_id] if ours else []
    evaluations += [_transfer_id(eval_id, protocol) for protocol in protocols]
    for evaluation in evaluations:
        for arm in EvalArm:
            run_id = arm_run_id(evaluation, arm)
            if why := run_id_problem(run_id):
                raise ConfigError(
                    f"eval id {eval_id!r}: its run {run_id!r} is not a valid run id: {why}", eval_id=eval_id
                )
