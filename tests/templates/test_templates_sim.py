"""End to end: rendered prompts sent through the real LLM stack to the in-process simulator."""

from __future__ import annotations

import json

import pytest

from skillharness.data.questions import Question
from skillharness.llm import ChatRequest, EndpointConfig, LLMConfig, SamplingParams, build_chat_model
from skillharness.llm.roles import RESPONSE_SCHEMAS
from skillharness.sim import LatencyConfig, SimConfig, SimServer
from skillharness.skills import Bundle, EditSet, EditTarget, initial_bundle, parse_edit_set
from skillharness.train.roles.prompt_specs import TEMPLATE_SPECS, CaseView
from skillharness.train.roles.templates import PromptTemplates, RenderedPrompt

TASK = "OCR Problems"


def _question(i: int) -> Question:
    return Question(
        video_id=f"{i:03d}",
        duration="short",
        videoID=f"vid{i:03d}",
        question_id=f"{i:03d}-1",
        task_type=TASK,
        question=f"Which word is painted on sign number {i} near the door?",
        options=(f"A. Alpha{i}", f"B. Bravo{i}", f"C. Charlie{i}", f"D. Delta{i}"),
        answer="C",
    )


QUESTIONS = [_question(i) for i in range(1, 5)]


pytestmark = pytest.mark.sim_world(
    SimConfig(seed=5, latency=LatencyConfig(ttft_s=0.0, per_token_s=0.0, jitter_s=0.0)), questions=QUESTIONS
)


def _case(question: Question) -> CaseView:
    return CaseView(
        question_id=question.question_id,
        task_type=question.task_type,
        question=question.question,
        options=question.options,
        correct_answer=question.answer,
        agent_answer="B",
        duration_s=120.0,
        trace_summary=(
            "1. model: the sign is small\n2. get_frames(0.0, 120.0, 4) -> 4 frames\n3. submit_answer(B)"
        ),
        judge_reason="The skill does not say to zoom in on small text.",
    )


async def _ask(sim: SimServer, prompt: RenderedPrompt, sample_idx: int = 0) -> str:
    config = LLMConfig(model=sim.model_name, endpoints=(EndpointConfig(base_url=sim.base_url),))
    request = ChatRequest(
        model=sim.model_name,
        messages=prompt.messages(),
        role=prompt.role,
        response_format=prompt.response_format(),
        sampling=SamplingParams(temperature=0.7, max_tokens=2048),
        sample_idx=sample_idx,
    )
    async with build_chat_model(config) as model:
        response = await model.complete(request)
    assert response.content is not None
    return response.content


async def test_evolve_skill_prompt_round_trips_to_an_applicable_edit_set(
    sim: SimServer, templates: PromptTemplates
) -> None:
    bundle = initial_bundle()
    prompt = templates.render(
        "evolve_skill",
        task_type=TASK,
        document=bundle.skill(TASK).render(),
        cases=[_case(q) for q in QUESTIONS[:3]],
        rejected=[],
        under_test=[],
        skill_update_mode="patch",
        max_edits=4,
        max_body_chars=8000,
    )
    for sample_idx in range(3):
        edit_set = parse_edit_set(await _ask(sim, prompt, sample_idx))
        assert isinstance(edit_set, EditSet), edit_set
        applied = bundle.apply(EditTarget.skill(TASK), edit_set)
        assert isinstance(applied, Bundle), applied  # anchors found in the body the prompt showed
        assert applied.skill(TASK).render() != bundle.skill(TASK).render()
        assert applied.skill(TASK).appendix == bundle.skill(TASK).appendix


@pytest.mark.parametrize(
    "name", ["judge", "span_eval_user", "evolve_rank", "slow_momentum", "consolidate_system"]
)
async def test_other_prompts_get_answers_that_fit_their_schema(
    sim: SimServer, templates: PromptTemplates, name: str
) -> None:
    spec = TEMPLATE_SPECS[name]
    values = spec.sample()
    if "case" in values:
        values["case"] = _case(QUESTIONS[0])
    answer = json.loads(await _ask(sim, templates.render(name, values)))
    schema = RESPONSE_SCHEMAS[spec.role]
    assert set(schema["required"]) <= answer.keys() <= schema["properties"].keys()
    if name == "evolve_rank":
        # The sample offers declining (may_decline), and its candidates state no real insight.
        assert values["may_decline"]
        assert -1 <= answer["choice"] < len(values["candidates"])
    if name in ("judge", "span_eval_user"):
        # The simulator recognised the question from the prompt text alone.
        assert answer["reason"] != "I cannot tell which question this is."
