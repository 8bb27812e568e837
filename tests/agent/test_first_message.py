"""The first user message: verbatim question and options, duration, subtitles, honest frame wording."""

from __future__ import annotations

from agent_support import ScriptedModel, answer_reply, question

from skillharness.agent import Agent, AgentConfig
from skillharness.agent.prompt import first_user_message
from skillharness.agent.video import LocalVideos
from skillharness.skills.bundle import Bundle
from skillharness.store import RunLog


def test_message_holds_question_options_duration_and_subtitles_verbatim() -> None:
    q = question("q9")
    message = first_user_message(
        q, duration_s=12.5, timestamps=(1.0, 2.0), frames=None, subtitles=("[1.0s] hi",), subtitle_chars=500
    )
    text = message["content"]
    assert f"Question: {q.question}" in text
    assert "\n".join(q.options) in text
    assert "Video duration: 12.5s." in text
    assert "Subtitles at the sampled times:\n[1.0s] hi" in text
    assert "Sampled times: 1.0s, 2.0s." in text


async def test_vision_on_without_initial_frames_does_not_claim_frames_are_off(
    default_bundle: Bundle, videos: LocalVideos, run_log: RunLog
) -> None:
    model = ScriptedModel({"q1": [answer_reply("B")]})
    config = AgentConfig(initial_frames=0, max_frames=8, max_steps=2)
    agent = Agent(model, "sim-vl", default_bundle, videos, videos, config)
    await agent.answer(question("q1"), run_id="run-1", sample_idx=0, sink=run_log)
    text = model.requests[0].messages[1]["content"]
    assert isinstance(text, str)
    assert "not shown in this run" not in text  # get_frames is offered: frames are not off
    assert "No frames are shown up front." in text
    offered = {tool["function"]["name"] for tool in model.requests[0].tools or ()}
    assert "get_frames" in offered
