"""Fixtures of the simulator tests: a small question set, and an OpenAI client of ``sim``.

``sim`` itself is the shared fixture of tests/conftest.py; each module here marks it
``sim_world(SIM_TEST_WORLD, questions="questions")`` (sim_support.py).
"""

from __future__ import annotations

import pytest
from sim_support import make_questions

from skillharness.data.questions import Question
from skillharness.sim import SimServer


@pytest.fixture(scope="session")
def questions() -> list[Question]:
    return make_questions()


@pytest.fixture
def client(sim: SimServer):
    from openai import OpenAI

    with OpenAI(base_url=sim.base_url, api_key="sim", max_retries=0, timeout=20) as c:
        yield c
