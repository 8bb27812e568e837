"""What every training step is handed: the session, the role caller, the pools and the run.

Training is built from the train and val pools only (audit checklist: a sealed test pool): the
context has no field that could hold test questions, so no training step can read them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from skillharness.agent import refusal_of
from skillharness.agent.records import Prediction, PredictionStatus
from skillharness.data import Pool
from skillharness.data.questions import Question
from skillharness.infer import reuse_salt
from skillharness.infer.session import RunSession
from skillharness.skills import Bundle
from skillharness.store import RunKind, RunLog, RunProvenance, RunStore, content_hash
from skillharness.train.config import TrainConfig
from skillharness.train.state.caller import RoleCaller
from skillharness.train.state.draws import draw_temperature
from skillharness.train.state.outage import check_infra
from skillharness.train.state.refusals import RefusalTally, arm_of, check_refusals
from skillharness.train.state.reserve import reserved_ids

__all__ = ["TrainContext"]


@dataclass(frozen=True)
class TrainContext:
    """The training run's shared, read-mostly state (the mutable state is the checkpoint)."""

    run_id: str
    config: TrainConfig
    session: RunSession
    caller: RoleCaller
    train_units: tuple[tuple[Question, ...], ...]  # the train pool, a video's questions together
    val_questions: tuple[Question, ...]
    task_types: tuple[str, ...]  # the trained classes
    provenance: RunProvenance  # the training run's; children copy it with their own id and bundle
    micro_trained: tuple[str, ...] = ()  # trained classes that are micro (named in train.task_types)
    max_infra_share: float = (
        0.5  # infer.max_infra_share: past it a rollout is an outage (train/state/outage.py)
    )
    # infer.max_refused_share: past it the run's refused requests stop it (train/state/refusals.py)
    max_refused_share: float = 0.1
    # Val scores by bundle hash: each version is scored once per process (filled by scoring).
    val_scores: dict[str, Any] = field(default_factory=dict)
    # Every agent draw asked and whether the server refused it, by arm (filled by rollout).
    refusals: RefusalTally = field(default_factory=RefusalTally)

    @cached_property
    def train_questions(self) -> tuple[Question, ...]:
        return tuple(q for unit in self.train_units for q in unit)

    @property
    def store(self) -> RunStore:
        return self.session.store

    @cached_property
    def reserved(self) -> frozenset[str]:
        """Val questions no gate or guard draws (``train.gate.reserve``); the final score asks them."""
        return reserved_ids(self.val_questions, self.config.gate.reserve)

    @cached_property
    def val_by_type(self) -> Mapping[str, tuple[Question, ...]]:
        """The val questions gates draw, by class: the reserve left out."""
        grouped: dict[str, list[Question]] = {}
        for q in self.val_questions:
            if q.question_id in self.reserved:
                continue
            grouped.setdefault(q.task_type, []).append(q)
        return {t: tuple(qs) for t, qs in sorted(grouped.items())}

    @cached_property
    def sampling_hash(self) -> str:
        """What makes one incumbent sample comparable to another: the model, the sampling and every
        agent setting that can change an answer, hashed (part of every BaselineCache key)."""
        agent = self.session.agent_config.model_dump(
            mode="json",
            exclude={"concurrency": True, "bundle": True, "frames": {"cache_dir", "cache_enabled"}},
        )
        return content_hash({"model": self.provenance.model, "agent": agent})

    @property
    def baseline_scope(self) -> str | None:
        """Whose incumbent samples this run's gates may reuse from the BaselineCache: every run's
        (None) only where ``cache.share_across_runs`` allows it, else its own (or ``cache.salt``'s)."""
        return reuse_salt(self.session.cache, self.run_id, self.session.agent_config.sampling.temperature)

    @property
    def temperature(self) -> float:
        """The draw temperature (an unset one was refused when the run opened)."""
        return draw_temperature(self.session.agent_config.sampling)

    async def child_log(self, suffix: str, bundle: Bundle, *, kind: RunKind, pool: Pool | None) -> RunLog:
        """The writer of a child run (``<run id>.<suffix>``), created or resumed."""
        # Validated, not model_copy'd: a child's id, kind and pool are checked like any run's.
        provenance = RunProvenance.model_validate(
            {
                **self.provenance.model_dump(),
                "run_id": f"{self.run_id}.{suffix}",
                "kind": kind,
                "bundle_hash": bundle.bundle_hash,
                "pool": pool,
                "parent_run_id": self.run_id,
            }
        )
        return await self.store.open_or_resume(provenance)

    @property
    def gate_window(self) -> int:
        """Paired draws a gate asks at a time: one arm's conversations in flight (agent.concurrency).
        The gate decides after each window, so a test that decides early in a large stage spends
        at most one window past its decision, not the rest of the stage."""
        return self.session.agent_config.concurrency

    @property
    def stage_draws(self) -> int:
        """Draws a long rollout (a val score) asks between two budget checks: about one stage."""
        return max(self.config.gate.first_stage, 4 * self.session.agent_config.concurrency)

    async def rollout(
        self,
        bundle: Bundle,
        draws: Sequence[tuple[Question, int]],
        suffix: str,
        *,
        kind: RunKind,
        pool: Pool,
        check_stop: Callable[[], None] | None = None,
    ) -> list[Prediction]:
        """Roll ``bundle`` out on ``draws`` as child run ``suffix`` (resumable); the run is closed after.

        Draws that failed on infrastructure are asked again ``train.infra_retries`` times; an outage
        left after that stops the run resumably (:func:`~skillharness.train.state.outage.check_infra`).
        A request the server refused is not asked again (the same limit refuses it) but counted in
        :attr:`refusals`; too many stop the run (:func:`~skillharness.train.state.refusals.check_refusals`).
        With ``check_stop`` (the run's budget and stop file) the draws are asked
        :attr:`stage_draws` at a time, checking before each further part: a stop keeps what was
        answered, and the resume asks only the rest.
        """
        async with await self.child_log(suffix, bundle, kind=kind, pool=pool) as log:
            step = len(draws) if check_stop is None else self.stage_draws
            predictions: list[Prediction] = []
            for start in range(0, len(draws), max(step, 1)):
                if start and check_stop is not None:
                    check_stop()
                predictions += await self.session.rollout(bundle, draws[start : start + step], log)
            await self._ask_failed_again(bundle, draws, predictions, log)
        self.refusals.add(arm_of(suffix), predictions)
        check_refusals(self.refusals, what=log.run_id, limit=self.max_refused_share)
        check_infra(
            [p for p in predictions if refusal_of(p) is None],  # refusals have their own rule
            what=log.run_id,
            limit=self.max_infra_share,
            retries=self.config.infra_retries,
        )
        return predictions

    async def _ask_failed_again(
        self,
        bundle: Bundle,
        draws: Sequence[tuple[Question, int]],
        predictions: list[Prediction],
        log: RunLog,
    ) -> None:
        """Ask the draws that failed on infrastructure again, up to ``train.infra_retries`` times."""
        for _ in range(self.config.infra_retries):
            failed = [
                i
                for i, p in enumerate(predictions)
                # A refusal is not asked again: at temperature > 0 another sample might pass, and
                # keeping only the conversations short enough to pass is the bias refusals must not bring.
                if p.status is PredictionStatus.INFRA_ERROR and refusal_of(p) is None
            ]
            if not failed:
                break
            # The same (question, sample) again: a rollout re-asks an infra_error, never an answer.
            again = await self.session.rollout(bundle, [draws[i] for i in failed], log)
            for i, p in zip(failed, again, strict=True):
                predictions[i] = p
