"""``/sim/oracle`` with ``missing``: per question, the needed insights its skill text lacks."""

from __future__ import annotations

import httpx
import pytest
from sim_support import SIM_TEST_WORLD

from skillharness.data.questions import Question
from skillharness.sim import SimServer

pytestmark = pytest.mark.sim_world(SIM_TEST_WORLD, questions="questions")


def test_missing_lists_exactly_the_absent_needed_insights(sim: SimServer, questions: list[Question]) -> None:
    q = questions[0]
    needed = [sim.world.insight(i) for i in sim.world.truth(q).needed]
    half = "\n".join(f"- {rule.canonical}" for rule in needed[:1])
    ids = [q.question_id]
    for skill, expected in (("", [r.id for r in needed]), (half, [r.id for r in needed[1:]])):
        payload = {"bundle": {"skills": {q.task_type: skill}}, "question_ids": ids, "missing": True}
        answer = httpx.post(f"{sim.url}/sim/oracle", json=payload, timeout=10).json()
        assert answer["missing"] == {q.question_id: expected}
    plain = httpx.post(f"{sim.url}/sim/oracle", json={"question_ids": ids}, timeout=10).json()
    assert "missing" not in plain
