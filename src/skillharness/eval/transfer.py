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
from skillharness.eval.ledger import transfer_metric
from skillharness.infer import InferProgress, check_agent_slot
from skillharness.skills import Bundle
from skillharness.store import RunStore

__all__ = ["TransferSettings", "check_transfers", "run_transfers", "under_protocol"]


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
            eval_id=f"{eval_id}.{protocol.value}",
            store=store,
            progress=progress,
            metric=transfer_metric(protocol.value),
        )
    return reports
