"""The largest request an episode can send: what a server's limits must take (preflight's probe).

A server set up below the run's requests (a proxy's body limit, fewer images per prompt than
``agent.max_frames``, a ``max_tokens`` over its limit) refuses them, and a text-only probe never
shows it. The largest agent request carries every frame the budget allows: the episode's first
message with ``initial_frames``, and later ``get_frames`` results up to ``max_frames`` in all. This
builds that request from a real question through the agent's own prompt code: the system prompt
and the question's skill, the question with ``max_frames`` uniform frames and their subtitles, the
tools, and the run's sampling (its real ``max_tokens``).
"""

from __future__ import annotations

from skillharness.agent.loop import Agent
from skillharness.agent.prompt import first_user_message, system_message
from skillharness.agent.tools import available_tools, tool_specs
from skillharness.data.questions import Question
from skillharness.llm.roles import Role
from skillharness.llm.types import ChatRequest
from skillharness.video.frames import uniform_timestamps

__all__ = ["largest_request"]


async def largest_request(agent: Agent, question: Question) -> ChatRequest:
    """``question``'s request with ``agent.config.max_frames`` frames (none with vision off).

    Raises what reading the video raises (a DataError naming it): a probe that could not be built
    was not run, and its caller says so rather than passing it.
    """
    config = agent.config
    duration = await agent.frames.duration_s(question)
    frames = None
    times = uniform_timestamps(duration, config.max_frames) if config.max_frames else ()
    if config.vision:
        frame_set = await agent.frames.uniform(question, config.max_frames) if config.max_frames else None
        frames = frame_set.frames if frame_set is not None else ()
        times = frame_set.timestamps if frame_set is not None else ()
    subtitles = None
    if config.subtitles and agent.subtitles is not None:
        subtitles = await agent.subtitles.lines_at(question, times) if times else ()
    message = first_user_message(
        question,
        duration_s=duration,
        timestamps=times,
        frames=frames,
        subtitles=subtitles,
        subtitle_chars=config.max_subtitle_chars,
    )
    specs = tool_specs(agent.bundle, available_tools(config, has_subtitles=agent.subtitles is not None))
    return ChatRequest(
        model=agent.model_name,
        messages=(
            system_message(agent.bundle.system_prompt, agent.bundle.skill(question.task_type).render()),
            message,
        ),
        role=Role.AGENT,
        tools=specs or None,
        tool_choice="auto" if specs else None,
        sampling=config.sampling.for_draw(question.question_id, 0, config.seed_salt or ""),
    )
