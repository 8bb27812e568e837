"""A request the server refuses for its size is no answer: the agent records it as a refusal, never as
a wrong answer, and builds the run's largest request for preflight to try (agent/refusal.py,
agent/largest.py). A scripted model stands for the server; frames and the store are real."""

from __future__ import annotations

from agent_support import InvalidatingModel, question, tool_reply

from skillharness.agent import Agent, AgentConfig, PredictionStatus, Refusal, largest_request, refusal_of
from skillharness.agent.episode import REQUEST_REFUSED
from skillharness.agent.video import LocalVideos
from skillharness.llm import count_images
from skillharness.llm.errors import error_for_status
from skillharness.llm.types import SamplingParams
from skillharness.skills.bundle import Bundle
from skillharness.store import RunLog


def _refused_413() -> Exception:
    error = error_for_status(413, "<html>413 Request Entity Too Large</html>", "gpu-a")
    error.context = {**error.context, "limit": "body_size"}  # what the client adds (tests/llm)
    return error


def _agent(model: InvalidatingModel, bundle: Bundle, videos: LocalVideos, **config: object) -> Agent:
    settings = {"initial_frames": 4, "max_frames": 8, "max_steps": 4} | config
    return Agent(model, "sim-vl", bundle, videos, videos, AgentConfig.model_validate(settings))


async def test_a_refused_request_is_a_counted_refusal_never_a_wrong_answer(
    default_bundle: Bundle, videos: LocalVideos, run_log: RunLog
) -> None:
    """The long conversation (after get_frames) is refused: no answer, neither right nor wrong."""
    model = InvalidatingModel(
        {"q1": [tool_reply("get_frames", '{"start_s": 0, "end_s": 2, "count": 4}'), _refused_413()]}
    )
    prediction = await _agent(model, default_bundle, videos).answer(
        question("q1"), run_id="run-1", sample_idx=0, sink=run_log
    )
    assert prediction.status is PredictionStatus.INFRA_ERROR
    assert prediction.error_class == REQUEST_REFUSED
    assert prediction.correct is None
    assert refusal_of(prediction) == Refusal(413, "gpu-a", "body_size")
    # The complete first turn is model output: kept, so a resume asks the same conversation again.
    assert model.invalidated == []


async def test_the_largest_request_carries_max_frames_images_and_the_runs_max_tokens(
    default_bundle: Bundle, videos: LocalVideos
) -> None:
    sampling = SamplingParams(temperature=0.0, max_tokens=777)
    agent = _agent(InvalidatingModel({}), default_bundle, videos, sampling=sampling)
    request = await largest_request(agent, question("q1"))
    assert count_images(request.messages) == 8
    assert request.sampling.max_tokens == 777
    assert request.tools is not None
    assert request.messages[0]["role"] == "system"


async def test_without_vision_the_largest_request_has_no_image(
    default_bundle: Bundle, videos: LocalVideos
) -> None:
    agent = _agent(InvalidatingModel({}), default_bundle, videos, vision=False)
    request = await largest_request(agent, question("q1"))
    assert count_images(request.messages) == 0
