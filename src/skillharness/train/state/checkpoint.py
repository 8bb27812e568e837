"""The training loop's state: one versioned type, written atomically after every decision.

Crash order (see :mod:`skillharness.train.loop.epochs`): a new bundle version is committed to the
workspace first, then the checkpoint. Every version records the cursor that made it, so a resume
whose checkpoint is one decision behind adopts that version instead of making it again. Every
random choice is derived from ``(seed, epoch, step, gate index)``, so no RNG state is kept. Two
counters go beside the cursor. ``next_sample``: a resumed gate starts at the same sample index as
the gate it replays, because the checkpoint moves it only after the decision. ``accepts``: the
run's accepts so far, which ``train.gate.alpha_spending: elond`` fixes into each test's level when
it opens; a checkpoint written before it reads 0, a lower level, so the run's guarantee holds.

The open candidates (:class:`OpenCandidate`) are tests kept across steps: each holds its edit
set, the version it is tested against, its level and every observation so far, so a resume
rebuilds its e-process by replaying them. Schema 1 (before open candidates) is read and upgraded:
it had none open.

The budget is the run's, not an invocation's: :class:`Spent` holds the calls, cost and wall time of
every invocation so far, so a ``--resume`` continues the same budget (schema 3; an older
checkpoint is read as having spent nothing, the only figure it can vouch for).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError

from skillharness.errors import ConfigError
from skillharness.train.roles.prompt_specs import EditSetView
from skillharness.train.state.rank_trial import RankTrial
from skillharness.train.state.records import RejectedEdit
from skillharness.util.atomic import atomic_write_json
from skillharness.util.model import StrictModel, describe_validation

__all__ = [
    "CHECKPOINT_FILE",
    "CHECKPOINT_SCHEMA_VERSION",
    "AcceptedEdit",
    "Checkpoint",
    "OpenCandidate",
    "RetiredTarget",
    "RunState",
    "Spent",
]

CHECKPOINT_FILE = "checkpoint.json"
CHECKPOINT_SCHEMA_VERSION = 3
# Schema 1: no open candidates, no round state; schema 2: no spent budget. The defaults are their meaning.
_UPGRADABLE = (1, 2)


class RunState(StrEnum):
    RUNNING = "running"
    FINISHED = "finished"  # every epoch ran
    STOPPED_EARLY = "stopped_early"  # patience ran out
    INTERRUPTED = "interrupted"  # Ctrl-C, SIGTERM, stop file or budget: resumable

    @property
    def ended(self) -> bool:
        """Training is over (every epoch ran, or patience ran out): a resume has nothing to train."""
        return self in (RunState.FINISHED, RunState.STOPPED_EARLY)


class Spent(StrictModel):
    """What a run has spent of its budget, over every invocation (cache hits are not calls)."""

    calls: int = Field(0, ge=0)
    cost: float = Field(0.0, ge=0)
    wall_s: float = Field(0.0, ge=0)
    # Calls, cache hits, failures, tokens, cost and latency by role (``Accountant.summary``), summed
    # over invocations, so the report's cost section counts the run, not its last invocation. A
    # checkpoint from before it reads as {}: only what later invocations spend is shown.
    usage: dict[str, dict[str, float]] = Field(default_factory=dict)

    def plus(
        self, calls: int, cost: float, wall_s: float, usage: Mapping[str, Mapping[str, float]] | None = None
    ) -> Spent:
        merged = {role: dict(counts) for role, counts in self.usage.items()}
        for role, counts in (usage or {}).items():
            mine = merged.setdefault(role, {})
            for name, value in counts.items():
                mine[name] = mine.get(name, 0) + value
        return Spent(
            calls=self.calls + calls, cost=self.cost + cost, wall_s=self.wall_s + wall_s, usage=merged
        )


class AcceptedEdit(StrictModel):
    """An accepted edit of the current epoch, kept for slow momentum."""

    target: str
    rationale: str
    edits_json: str

    def view(self) -> EditSetView:
        return EditSetView(rationale=self.rationale, edits_json=self.edits_json)


class RetiredTarget(StrictModel):
    """A target whose gate can no longer accept at the level its next gate gets: never evolved again."""

    epoch: int
    step: int
    detail: str


class OpenCandidate(StrictModel):
    """A candidate whose test is still open: enough to rebuild its bundle and its e-process exactly.

    The bundle is ``base_version`` with ``edit_set`` applied to ``target`` (checked against
    ``bundle_hash``); the test is of that bundle against ``base_version``, at level ``alpha``,
    on the draw plan of gate ``key`` from sample ``first_sample`` with ``n_max`` observations.
    ``observed`` holds every observation (``d``) and ``stage_ends`` the counts after each feed,
    so replaying them through a fresh ladder gives back its exact state.
    """

    key: int  # the gate index: draw plan, child runs g<key>.*, the decision row
    target: str
    edit_set: dict[str, Any]
    evidence_ids: list[str] = Field(default_factory=list)
    choice: str = "only"
    choice_detail: str = ""
    base_version: str
    base_hash: str  # what the scope's classes saw in base_version: a change means a rebase
    bundle_hash: str
    alpha: float
    n_max: int = Field(ge=1)
    first_sample: int
    # A plan the tests of one incumbent share (train.gate.share_incumbent), keyed by its first
    # sample; else a plan of its own, keyed by the gate index.
    shared_plan: bool = False
    cursor: int = 0  # plan draws consumed
    observed: list[int] = Field(default_factory=list)
    stage_ends: list[int] = Field(default_factory=list)
    infra: int = 0
    # Draws skipped because the server refused a side (incumbent, candidate, both, draws): part of
    # ``infra``, but a resume meets the same limit, so a plan they exhaust closes the test.
    refused: dict[str, int] = Field(default_factory=dict)
    wealth: float = 1.0
    harm_wealth: float = 1.0
    opened: tuple[int, int]  # (epoch, step) it was first opened at
    rounds: int = 0  # stages fed (continuations)
    rebased_from: list[int] = Field(default_factory=list)  # earlier gate indices of this edit set
    invalid: str = ""  # a rebase whose re-apply was refused: closes as reject_invalid
    merged_with: list[int] = Field(default_factory=list)  # open tests whose edits this set carries too
    own_edit_set: dict[str, Any] | None = None  # a merged test's own proposal: reopened alone if refused
    # Proposals whose edits the set carries (a merged set: its partner's and one more); after a
    # rebase that dropped landed edits, 1 again (train.gate.merge_sizing).
    parts: int = Field(1, ge=1)

    @property
    def plan_key(self) -> int | None:
        """The draw plan's order key: the shared plan's first sample, or None (the gate index)."""
        return self.first_sample if self.shared_plan else None


class Checkpoint(StrictModel):
    """Where the loop is and what it remembers. Epochs are 1-based; epoch 0 is the baseline."""

    schema_version: Literal[3] = CHECKPOINT_SCHEMA_VERSION
    run_id: str
    baseline_run_id: str
    state: RunState = RunState.RUNNING
    # The cursor: the next (epoch, step, target) to run, and the next decision / gate numbers.
    epoch: int = 1
    step: int = 0
    target_index: int = 0
    decision_index: int = 0  # every candidate, valid or not, gets one (gate_decisions key)
    gates_run: int = 0  # gates that drew observations: the alpha-spending index
    # Accepts recorded so far (after the guard): e-LOND's count, fixed into a test's level when it
    # opens (train.gate.alpha_spending: elond). An older checkpoint reads 0: a lower level, still valid.
    accepts: int = Field(0, ge=0)
    # The first sample index no gate has used yet: a test on fresh samples draws from here, and
    # every test moves it past its own. 0 is the val score's sample, never a gate's.
    next_sample: int = Field(1, ge=1)
    # Per target label: [scope hash, first sample] of the plan its tests against the incumbent that
    # hash names share (train.gate.share_incumbent), so its incumbent's samples are drawn once. An
    # accept drops every entry whose hash it changed: the next test of that target starts fresh.
    sample_starts: dict[str, tuple[str, int]] = Field(default_factory=dict)
    version: str = "v0000"  # the incumbent
    step_version: str | None = None  # the incumbent when the current step began (its proposals' base)
    step_gates_run: int | None = None  # gates_run when the current step began (its reachability screen)
    step_accepts: int | None = None  # accepts when the current step began (its screen, under elond)
    retired: dict[str, RetiredTarget] = Field(default_factory=dict)  # target label -> why (P0-3)
    rejected: dict[str, list[RejectedEdit]] = Field(default_factory=dict)
    accepted_this_epoch: dict[str, list[AcceptedEdit]] = Field(default_factory=dict)
    ema: dict[str, float] = Field(default_factory=dict)
    best_score: float | None = None  # best epoch-end val accuracy (the baseline's at first)
    epochs_without_improvement: int = 0
    momentum_done: list[str] = Field(default_factory=list)  # "epoch:slug"
    epoch_end_done: int = 0  # last epoch whose end (momentum, consolidate, score) completed
    alpha_spent: float = 0.0
    stop_reason: str = ""
    # Open candidates (tests kept across steps, in opening order) and the current evidence round:
    # the gate indices already fed and the targets already decided in it (one decision per target
    # and round, so each decision has its own dual_metric row).
    open: list[OpenCandidate] = Field(default_factory=list)
    round_fed: list[int] = Field(default_factory=list)
    round_closed: list[str] = Field(default_factory=list)
    step_busy: list[str] | None = None  # targets with train.gate.max_open open at the step's start
    drain_rounds: int = 0  # evidence rounds run after the epochs ended
    # Paired observations per class: [discordant, observed], the discordance each test is sized by.
    discordance: dict[str, list[int]] = Field(default_factory=dict)
    spent: Spent = Field(default_factory=Spent)  # the run's budget spent so far, every invocation's
    # train.evolve.rank auto: the rank trial's evidence and verdict, judged only at a step's start
    # so that a resumed step proposes under the design it began with.
    rank_trial: RankTrial = Field(default_factory=RankTrial)

    def save(self, folder: Path) -> None:
        """Write atomically (temp file, fsync, replace): a crash leaves the previous one (P1-7)."""
        atomic_write_json(folder / CHECKPOINT_FILE, self.model_dump(mode="json"))

    @classmethod
    def load(cls, folder: Path) -> Checkpoint:
        path = folder / CHECKPOINT_FILE
        if not path.is_file():
            raise ConfigError(f"no checkpoint at {path}: nothing to resume", file=str(path))
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ConfigError(f"{path}: unreadable checkpoint: {exc}", file=str(path)) from exc
        version = data.get("schema_version") if isinstance(data, dict) else None
        if version in _UPGRADABLE:
            data = {**data, "schema_version": CHECKPOINT_SCHEMA_VERSION}
        elif version != CHECKPOINT_SCHEMA_VERSION:
            raise ConfigError(
                f"{path}: checkpoint schema version {version!r}; this skillharness reads "
                f"{CHECKPOINT_SCHEMA_VERSION}",
                file=str(path),
            )
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise ConfigError(
                f"{path}: invalid checkpoint: {describe_validation(exc, limit=3)}", file=str(path)
            ) from exc

    def remember_rejection(self, target: str, edit: RejectedEdit, keep: int) -> Checkpoint:
        history = [*self.rejected.get(target, []), edit][-keep:] if keep else []
        return self.model_copy(update={"rejected": {**self.rejected, target: history}})

    def remember_accept(self, target: str, edit: AcceptedEdit) -> Checkpoint:
        done = [*self.accepted_this_epoch.get(target, []), edit]
        return self.model_copy(update={"accepted_this_epoch": {**self.accepted_this_epoch, target: done}})
