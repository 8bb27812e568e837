"""Helpers of the diagnosis tests: a rollout to diagnose, a request recorder on the simulator."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field, replace
from typing import Any

from skillharness.agent import Prediction
from skillharness.llm.roles import Role
from skillharness.sim import SimConfig, SimServer
from skillharness.sim.wire import Reply
from skillharness.skills import Bundle
from skillharness.store import RunKind
from skillharness.train.state.context import TrainContext

ROLLOUT = "r0"  # the child run every test diagnoses: <train run id>.r0
SAMPLES = 3  # samples per train question: enough wrong answers on a small bench
# Vision on: the simulated agent calls get_frames only when it is offered, so traces have tool calls.
# Sampling: at temperature 0 the SAMPLES of a question would be one answer repeated (as on a server).
AGENT = {"vision": True, "initial_frames": 4, "sampling": {"temperature": 0.7}}

# The simulator's answer knobs that keep these tests about diagnosis: every agent answer parses,
# every judge verdict follows the world (no noise), so the causes are known in advance.
QUIET_AGENT = {"awkward_rate": 0.0}
EXACT_JUDGE = {"noise": 0.0, "uncertain_rate": 0.0}


def diagnose_world(seed: int) -> SimConfig:
    """The simulated world of the diagnosis tests: ``QUIET_AGENT`` and ``EXACT_JUDGE`` at ``seed``."""
    return SimConfig.model_validate({"seed": seed, "agent": QUIET_AGENT, "judge": EXACT_JUDGE})


# One attempt per call, and a breaker that never opens: a forced judge failure stays a failure.
NO_RETRY_LLM = {"retry": {"max_attempts": 1}, "breaker": {"failure_threshold": 1000}}


@dataclass
class RequestLog:
    """Every request body the simulator's responder was handed (they arrived over HTTP)."""

    bodies: list[tuple[Role | None, dict[str, Any]]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def of(self, role: Role) -> list[dict[str, Any]]:
        with self.lock:
            return [body for r, body in self.bodies if r is role]


class _Recording:
    def __init__(self, inner: Any, log: RequestLog) -> None:
        self.inner, self.log = inner, log

    def respond(self, body: dict[str, Any], role: Role | None) -> Reply:
        with self.log.lock:
            self.log.bodies.append((role, json.loads(json.dumps(body))))
        return self.inner.respond(body, role)

    def __getattr__(self, name: str) -> Any:  # refusal, world, oracle: the wrapped model's
        return getattr(self.inner, name)


class _Garbling:
    def __init__(self, inner: Any, count: int) -> None:
        self.inner, self.left, self.lock = inner, count, threading.Lock()

    def respond(self, body: dict[str, Any], role: Role | None) -> Reply:
        reply = self.inner.respond(body, role)
        with self.lock:
            garble = role is Role.JUDGE and self.left > 0
            self.left -= garble
        return replace(reply, content="I think it is a defect, probably.") if garble else reply

    def __getattr__(self, name: str) -> Any:  # refusal, world, oracle: the wrapped model's
        return getattr(self.inner, name)


def garble_judge_replies(sim: SimServer, count: int) -> None:
    """The simulator's next ``count`` judge replies are prose, not the judge's JSON object."""
    sim.state.responder = _Garbling(sim.state.responder, count)


def record_requests(sim: SimServer) -> RequestLog:
    """Record what the running simulator receives from now on (its answers are unchanged)."""
    log = RequestLog()
    inner = sim.state.responder
    sim.state.responder = _Recording(inner, log)
    return log


def user_text(body: dict[str, Any]) -> str:
    """The text of a chat request's user messages."""
    parts = []
    for message in body["messages"]:
        if message["role"] == "user":
            content = message["content"]
            texts = [content] if isinstance(content, str) else [p.get("text", "") for p in content]
            parts.append(" ".join(texts))
    return "\n".join(parts)


async def rollout(ctx: TrainContext, bundle: Bundle) -> tuple[str, list[Prediction]]:
    """``SAMPLES`` samples of every train question, as child run ``<run id>.r0``."""
    draws = [(q, s) for q in ctx.train_questions for s in range(SAMPLES)]
    predictions = await ctx.rollout(bundle, draws, ROLLOUT, kind=RunKind.TRAIN, pool="train")
    return f"{ctx.run_id}.{ROLLOUT}", predictions
