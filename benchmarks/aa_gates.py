"""A/A machinery: null edits of a skill document gated by the training loop's own gate functions.

A null edit changes nothing the answer could depend on:

- ``same_text``: the edit set re-states the document as it is. The loop refuses it before any
  draw (``open_candidate`` compares the texts: ``reject_invalid``, "no_change").
- ``same_request``: one blank line before the skill body. The document (and the bundle hash) differ,
  so the loop opens a test, but the agent's system message strips the skill text, so every request
  the model is sent is byte for byte the incumbent's.
- ``whitespace``: the body's first paragraph break doubled (one more blank line). The request
  differs by one newline; the meaning does not.

Each gate runs through ``train/loop``'s own functions, the ones a training step calls:
``open_gates.open_candidate`` (the test's gate index, level, size sized from the run's measured
discordance, draw plan and sample range) and ``rounds.evidence_round`` (one ladder stage per round
of paired draws, a window of ``agent.concurrency`` at a time, the e-process, the sure and the
plausible futility stops, the decision and its ledger rows), repeated until the test closes. What
is not run: the step's rollout, diagnosis and evolve calls (the proposal is this module's). One
checkpoint carries the gates of a condition, as a run's does: each test's samples come after the
last one's, and its size uses the discordance the earlier tests measured.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from skillharness.llm.cache import cache_key
from skillharness.llm.types import ChatRequest, ChatResponse
from skillharness.skills import Bundle, EditLimits, EditSet, EditTarget, Workspace
from skillharness.store import GateDecisionRow, GateObservationRow
from skillharness.train.loop.open_gates import open_candidate
from skillharness.train.loop.rounds import evidence_round
from skillharness.train.state.checkpoint import Checkpoint
from skillharness.train.state.context import TrainContext
from skillharness.train.state.records import Candidate
from skillharness.train.validate.scoring import ValScore

NullKind = Literal["same_text", "same_request", "whitespace"]
NULL_KINDS: tuple[NullKind, ...] = ("same_text", "same_request", "whitespace")
FIRST = 3  # observations kept per gate: the GEPA-style rule's minibatch (strictly better on 3)


def null_candidate(incumbent: Bundle, task_type: str, kind: NullKind) -> Candidate:
    """The ``kind`` null edit of ``task_type``'s skill body, as the proposer would hand it over."""
    target = EditTarget.skill(task_type)
    body = incumbent.skill(task_type).body
    if kind == "same_request":
        new = "\n" + body
    elif kind == "whitespace":
        head, sep, tail = body.partition("\n\n")
        if not sep:
            raise ValueError(f"the {task_type} skill body has no blank line to double")
        new = head + "\n\n\n" + tail
    else:
        new = body
    edit_set = EditSet(skill_update_mode="rewrite", edits=(), body=new, rationale=f"A/A null edit ({kind})")
    after = incumbent.apply(target, edit_set, EditLimits(max_body_chars=100_000))
    if not isinstance(after, Bundle):
        raise ValueError(f"the {kind} null edit was refused: {after.reason}: {after.detail}")
    return Candidate(target, edit_set, after, incumbent.text_of(target), after.text_of(target), "only")


@dataclass(frozen=True)
class GateResult:
    """One null edit's test as the ledger recorded it."""

    gate_index: int
    status: str  # open_candidate's: opened, invalid
    reason: str  # accept, reject_evidence, reject_inertia, reject_invalid
    observations: int  # paired observations the decision rests on
    draws: int  # paired draws asked (INFRA ones included)
    wins: int
    losses: int
    ties: int
    infra: int
    wealth: float
    n_max: int  # the test's size
    rounds: int
    first: tuple[int, ...] = ()  # its first observations (d = +1, 0, -1), for the minibatch rule


class RequestLog:
    """Wraps the session's chat model: the cache key of each draw's first request, per draw.

    Both arms of a paired draw ask the same (question, sample): the same routing key. A byte-identical
    null edit gives each draw one distinct first request; any other two.
    """

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.first_requests: dict[str, set[str]] = {}

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def complete(self, request: ChatRequest) -> ChatResponse:
        if len(request.messages) == 2 and request.affinity is not None:  # the system and first user message
            self.first_requests.setdefault(request.affinity, set()).add(cache_key(request, None))
        response: ChatResponse = await self._inner.complete(request)
        return response


def log_requests(ctx: TrainContext) -> RequestLog:
    """Route the context's agent calls through a :class:`RequestLog` (observing only)."""
    log = RequestLog(ctx.session.stack)
    ctx.session.stack = log  # type: ignore[assignment]  # the agent only calls complete()
    return log


def _go() -> None:
    """No budget: each condition is sized by its number of gates."""


def _result(row: GateDecisionRow, observed: list[GateObservationRow], status: str) -> GateResult:
    decision: dict[str, Any] = row.evidence.get("decision") or {}
    paired = sorted((r for r in observed if r.arm == "target"), key=lambda r: r.draw_index)
    first = [r.candidate - r.incumbent for r in paired if r.candidate is not None and r.incumbent is not None]
    return GateResult(
        gate_index=row.gate_index,
        status=status,
        reason=row.reason,
        observations=int(decision.get("n", 0)),
        draws=int(row.evidence.get("draws", 0)),
        wins=int(decision.get("wins", 0)),
        losses=int(decision.get("losses", 0)),
        ties=int(decision.get("ties", 0)),
        infra=int(decision.get("infra", 0)),
        wealth=float(decision.get("wealth", 1.0)),
        n_max=int(row.evidence.get("n_max", 0)),
        rounds=int(row.evidence.get("rounds", 0)),
        first=tuple(first[:FIRST]),
    )


async def gate_null_edit(
    ctx: TrainContext,
    ws: Workspace,
    ckpt: Checkpoint,
    task_type: str,
    kind: NullKind,
    step: int,
    *,
    val_scores: bool = True,
) -> tuple[Checkpoint, GateResult]:
    """Open a test of the ``kind`` null edit against the incumbent and feed it rounds until it closes.

    ``val_scores`` False: the decision's ``dual_metric`` row (a whole val rollout of each new
    version, a report of the loop's, no part of the gate) is written with an empty score instead.
    """
    incumbent = ws.load(ckpt.version)
    proposal = null_candidate(incumbent, task_type, kind)
    if not val_scores:
        for bundle in (incumbent, proposal.bundle):
            ctx.val_scores.setdefault(bundle.bundle_hash, ValScore({}))
    cursor = {"epoch": 1, "step": step, "target": 0}
    key = ckpt.decision_index
    ckpt, status = await open_candidate(ctx, ws, ckpt, proposal, cursor=cursor, check_stop=_go)
    while any(o.key == key for o in ckpt.open):
        ckpt = await evidence_round(
            ctx, ws, ckpt, cursor={"epoch": 1, "step": step}, save=lambda _: None, before_decision=_go
        )
    where = {"train_run_id": ctx.run_id, "gate_index": key}
    rows = await asyncio.to_thread(ctx.store.select, GateDecisionRow, **where)
    observed = await asyncio.to_thread(ctx.store.select, GateObservationRow, **where)
    return ckpt, _result(rows[0], observed, status)


async def gate_null_edits(
    ctx: TrainContext,
    ws: Workspace,
    task_type: str,
    kind: NullKind,
    gates: int,
    on_gate: Callable[[GateResult], None] = lambda _: None,
    *,
    val_scores: bool = True,
) -> list[GateResult]:
    """``gates`` null edits of one kind, one after another on one checkpoint (see the module doc)."""
    ckpt = Checkpoint(run_id=ctx.run_id, baseline_run_id=f"{ctx.run_id}.baseline")
    results = []
    for step in range(gates):
        ckpt, result = await gate_null_edit(ctx, ws, ckpt, task_type, kind, step, val_scores=val_scores)
        results.append(result)
        on_gate(result)
    return results
