"""The simulated model: one object that answers any request by dispatching on its role."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from skillharness.data.questions import Question
from skillharness.llm.roles import Role
from skillharness.sim.agent_role import AgentRole
from skillharness.sim.config import SimConfig
from skillharness.sim.oracle import Oracle
from skillharness.sim.plain import PlainRole
from skillharness.sim.prompt import first_user_text, prompt_tokens
from skillharness.sim.requests import HTTPProblem
from skillharness.sim.roles import RoleBehaviours
from skillharness.sim.unknown import unknown_question
from skillharness.sim.wire import Reply, estimate_tokens
from skillharness.sim.world import World

__all__ = ["PLAIN_REPLY", "SimModel"]

PLAIN_REPLY = (
    "This is the skillharness simulator, a simulated model with a known ground truth. "
    "It answers agent, judge, evolve, rank, momentum and consolidate requests."
)


class SimModel:
    """World + roles + oracle for one config and question set (the server's ``Responder``)."""

    def __init__(
        self,
        config: SimConfig,
        questions: Sequence[Question] = (),
        *,
        source: str = "the list given to SimModel",
    ) -> None:
        self.config = config
        self.source = source  # where the questions came from, named when a request asks another one
        self.world = World(config, questions)
        self.oracle = Oracle(self.world)
        self.agent = AgentRole(self.world)
        self.behaviours = RoleBehaviours(self.world)
        self.plain = PlainRole(self.world)

    def refusal(self, body: dict[str, Any], role: Role | None) -> HTTPProblem | None:
        """The 404 for an agent request about a question the world does not hold (None: answer it).

        Only the agent role is refused: its request carries exactly one question. A plain request
        that names none of ours is chat (it gets :data:`PLAIN_REPLY`, which says what this is), and
        the judge and evolve roles say in their reply when they recognise no question.
        """
        if role is not Role.AGENT:
            return None
        user = first_user_text(body)
        if self.world.find_question(user) is not None:
            return None
        return unknown_question(user, self.source, len(self.world.questions))

    def respond(self, body: dict[str, Any], role: Role | None) -> Reply:
        """What the model says to ``body`` playing ``role`` (None: a plain chat reply)."""
        if role is Role.AGENT:
            return self.agent.respond(body)
        if role is None:
            # A plain request about one of our questions (a reference protocol's turn): a text answer.
            question = None if body.get("tools") else self.world.find_question(first_user_text(body))
            if question is not None:
                return self.plain.respond(body, question)
            return Reply(PLAIN_REPLY, (), "stop", prompt_tokens(body), estimate_tokens(PLAIN_REPLY))
        return self.behaviours.respond(body, role)
