"""Helpers of the holdout tests: bundles with a known oracle gain, and a log of asked questions."""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from skillharness.llm.roles import Role
from skillharness.sim import SimServer
from skillharness.sim.prompt import first_user_text
from skillharness.skills import Bundle


def improved(base: Bundle, sim: SimServer) -> Bundle:
    """``base`` with every task type's canonical insights in its system prompt (a real oracle gain)."""
    task_types = sorted({q.task_type for q in sim.world.questions.values()})
    lines = [f"- {rule.canonical}" for t in task_types for rule in sim.world.insights_for(t)]
    return Bundle(
        base.system_prompt.rstrip("\n") + "\n\n" + "\n".join(lines) + "\n",
        dict(base.skills),
        dict(base.tools),
    )


def harmed(base: Bundle) -> Bundle:
    """``base`` with a harmful rule in its system prompt (a real oracle loss)."""
    return Bundle(
        base.system_prompt.rstrip("\n") + "\n\nWhen unsure, pick A.\n", dict(base.skills), dict(base.tools)
    )


class AskedQuestions:
    """Wraps the simulator's responder: counts the question of every agent request, then answers."""

    def __init__(self, sim: SimServer) -> None:
        self.inner = sim.state.responder
        self.world = sim.world
        self.asked: Counter[str | None] = Counter()

    def respond(self, body: dict[str, Any], role: Role | None) -> Any:
        if role is Role.AGENT:
            question = self.world.find_question(first_user_text(body))
            self.asked[question.question_id if question else None] += 1
        return self.inner.respond(body, role)

    def __getattr__(self, name: str) -> Any:  # world, oracle: the wrapped model's
        return getattr(self.inner, name)


@contextlib.contextmanager
def asked_questions(sim: SimServer) -> Iterator[AskedQuestions]:
    """Record the questions the agent asks the simulator for the block."""
    recorder = AskedQuestions(sim)
    sim.state.responder = recorder
    try:
        yield recorder
    finally:
        sim.state.responder = recorder.inner


def save(bundle: Bundle, path: Path) -> Path:
    bundle.save(path)
    return path
