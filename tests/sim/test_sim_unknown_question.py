"""An agent request about a question the simulator was never given is refused with a 404 naming the
question and the questions the server holds, over real HTTP; a known question is still answered."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from sim_support import SIM_TEST_WORLD, first_messages, make_questions, tools

from skillharness.data.questions import Question
from skillharness.errors import FatalLLMError
from skillharness.llm import build_chat_model
from skillharness.llm.config import EndpointConfig, LLMConfig, RetryConfig
from skillharness.llm.roles import Role
from skillharness.llm.types import ChatRequest, SamplingParams
from skillharness.sim import FaultKind, SimServer
from skillharness.sim.unknown import UNKNOWN_QUESTION_CODE

pytestmark = pytest.mark.sim_world(SIM_TEST_WORLD, questions="questions")

_NEVER_GIVEN = Question(
    video_id="zz",
    duration="short",
    videoID="vidzz",
    question_id="zz-1",
    task_type="Counting Problem",
    question="How many lanterns hang above the harbour gate?",
    options=("A. One", "B. Two", "C. Three", "D. Four"),
    answer="B",
)


def _agent_body(question: Question) -> dict[str, object]:
    return {"model": "sim-vl", "messages": first_messages(question), "tools": tools(), "temperature": 0}


def _post(sim: SimServer, body: dict[str, object]) -> httpx.Response:
    return httpx.post(f"{sim.base_url}/chat/completions", json=body, timeout=10)


def test_a_question_never_given_is_a_404_naming_it_and_what_the_server_holds(sim: SimServer) -> None:
    response = _post(sim, _agent_body(_NEVER_GIVEN))
    assert response.status_code == 404
    error = response.json()["error"]
    assert error["code"] == UNKNOWN_QUESTION_CODE
    assert "How many lanterns hang above the harbour gate?" in error["message"]
    assert f"it holds {len(make_questions())} question(s)" in error["message"]
    assert sim.stats()["statuses"] == {"404": 1}
    known = _post(sim, _agent_body(make_questions()[0]))
    assert known.status_code == 200, known.text


def test_the_refusal_names_the_questions_file_and_spends_no_forced_fault(
    tmp_path: Path, questions: list[Question]
) -> None:
    path = tmp_path / "questions.json"
    path.write_text(json.dumps([q.model_dump() for q in questions]))
    with SimServer(SIM_TEST_WORLD, questions=path) as sim:
        sim.force_fault(FaultKind.HTTP_503)
        response = _post(sim, _agent_body(_NEVER_GIVEN))
        assert response.status_code == 404
        assert str(path) in response.json()["error"]["message"]
        # The forced fault is still there for the next request it answers.
        assert _post(sim, _agent_body(questions[0])).status_code == 503


def test_a_server_without_questions_refuses_every_agent_question() -> None:
    with SimServer(SIM_TEST_WORLD) as sim:
        response = _post(sim, _agent_body(make_questions()[0]))
        assert response.status_code == 404
        assert "holds no questions" in response.json()["error"]["message"]
        assert "--questions" in response.json()["error"]["message"]
        chat = _post(sim, {"model": "sim-vl", "messages": [{"role": "user", "content": "Reply with OK."}]})
        assert chat.status_code == 200, "a plain chat request is no question: it is answered"


async def test_the_harness_takes_the_refusal_as_final_not_as_a_wrong_answer(sim: SimServer) -> None:
    llm = LLMConfig(
        model=sim.model_name,
        endpoints=(EndpointConfig(base_url=sim.base_url),),
        retry=RetryConfig(max_attempts=3, base_delay_s=0.01),
    )
    request = ChatRequest(
        model=sim.model_name,
        messages=tuple(first_messages(_NEVER_GIVEN)),
        tools=tuple(tools()),
        role=Role.AGENT,
        sampling=SamplingParams(temperature=0.0),
    )
    async with build_chat_model(llm, None) as stack:
        with pytest.raises(FatalLLMError) as info:
            await stack.complete(request)
    assert info.value.context["status"] == 404
    assert "never given" in str(info.value)
    assert sim.stats()["requests"] == 1, "not retried"
