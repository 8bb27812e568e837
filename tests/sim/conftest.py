"""Fixtures: a small question set and an in-process simulator on a free loopback port."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sim_support import make_questions

from skillharness.data.questions import Question
from skillharness.sim import SimConfig, SimServer


@pytest.fixture(scope="session")
def questions() -> list[Question]:
    return make_questions()


@pytest.fixture
def sim(questions: list[Question]) -> Iterator[SimServer]:
    with SimServer(SimConfig(seed=7), questions=questions) as server:
        yield server


@pytest.fixture
def client(sim: SimServer):
    from openai import OpenAI

    with OpenAI(base_url=sim.base_url, api_key="sim", max_retries=0, timeout=20) as c:
        yield c
