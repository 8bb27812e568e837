"""The simulated model: one object that answers any request by dispatching on its role."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from skillharness.data.questions import Question
from skillharness.llm.roles import Role
from skillharness.sim.agent_role import AgentRole
from skillharness.sim.config import SimConfig
from skillharness.sim.oracle import Oracle
from skillharness.sim.prompt import prompt_tokens
from skillharness.sim.roles import RoleBehaviours
from skillharness.sim.wire import Reply, estimate_tokens
from skillharness.sim.world import World

__all__ = ["PLAIN_REPLY", "SimModel"]

PLAIN_REPLY = (
    "This is the skillharness simulator, a simulated model with a known ground truth. "
    "It answers agent, judge, evolve, rank, momentum and consolidate requests."
)


class SimModel:
    """World + roles + oracle for one config and question set (the server's ``Responder``)."""

    def __init__(self, config: SimConfig, questions: Sequence[Question] = ()) -> None:
        self.config = config
        self.world = World(config, questions)
        self.oracle = Oracle(self.world)
        self.agent = AgentRole(self.world)
        self.behaviours = RoleBehaviours(self.world)

    def respond(self, body: dict[str, Any], role: Role | None) -> Reply:
        """What the model says to ``body`` playing ``role`` (None: a plain chat reply)."""
        if role is Role.AGENT:
            return self.agent.respond(body)
        if role is None:
            return Reply(PLAIN_REPLY, (), "stop", prompt_tokens(body), estimate_tokens(PLAIN_REPLY))
        return self.behaviours.respond(body, role)
