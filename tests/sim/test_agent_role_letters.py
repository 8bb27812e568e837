"""The simulated agent answers with the question's own letters: with ten letters known (A-J), a
question of two or three options never gets a letter it does not show."""

from __future__ import annotations

import json

from sim_support import first_messages, tools

from skillharness.data.questions import Question
from skillharness.sim import AnswerShape, SimConfig
from skillharness.sim.agent_role import AgentRole
from skillharness.sim.config import AgentConfig
from skillharness.sim.world import World

_FORCE_SUBMIT = {"type": "function", "function": {"name": "submit_answer"}}


def _questions() -> list[Question]:
    return [
        Question(
            video_id=f"{n:03d}",
            duration="short",
            videoID=f"vid{n:03d}",
            question_id=f"{n:03d}-1",
            task_type="Counting Problem",
            question=f"In clip {n}, how many cups are on the table?",
            options=tuple(f"{x}. {k + n} cups" for k, x in enumerate("ABC"[: 2 + n % 2])),
            answer="AB"[n % 2],
        )
        for n in range(12)
    ]


def test_two_letter_answers_name_only_the_questions_letters() -> None:
    # Every answer is the two-letter shape: its second letter is the draw the fix is about.
    agent = AgentConfig(awkward_rate=1.0, awkward_shapes={AnswerShape.TWO_LETTERS: 1.0})
    questions = _questions()
    role = AgentRole(World(SimConfig(seed=3, agent=agent), questions))
    named: set[str] = set()
    for question in questions:
        for sample_idx in range(8):
            body = {
                "model": "sim-vl", "messages": first_messages(question), "tools": tools(),
                "tool_choice": _FORCE_SUBMIT, "temperature": 0.7, "sample_idx": sample_idx,
            }  # fmt: skip
            (call,) = role.respond(body).tool_calls
            letters = {x.strip() for x in json.loads(call.arguments)["answer"].split(",")}
            assert letters <= set(question.letters), (question.letters, call.arguments)
            named |= letters
    assert named == {"A", "B", "C"}, "both 2- and 3-option questions were answered"
