"""The largest request an episode can send: what a server's limits must take (preflight's probe).

A server set up below the run's requests (a proxy's body limit, fewer images per prompt than
``agent.max_frames``, a ``max_tokens`` over its limit) refuses them, and a text-only probe never
shows it. The largest agent request carries every frame the budget allows: the episode's first
message with ``initial_frames``, and later ``get_frames`` results up to ``max_frames`` in all. This
builds that request from a real question through the agent's own prompt code: the system prompt
and the question's skill, the question with ``max_frames`` uniform frames and their subtitles, the
tools, and the run's sampling (its real ``max_tokens``). The frames travel as the endpoints'
transport sends the first message's (``media``): as images, as one video of ``max_frames`` frames,
or as the video's URL with ``max_frames`` to sample.
"""

from __future__ import annotations

from skillharness.agent.loop import Agent
from skillharness.agent.prompt import first_user_message, system_message
from skillharness.agent.tools import available_tools, tool_specs
from skillharness.agent.transport import first_media
from skillharness.data.questions import Question
from skillharness.llm import FrameTransport
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
    if config.vision and agent.media.transport is FrameTransport.VIDEO_URL:
        frames = ()  # the server decodes the video: nothing here, the times stay the nominal ones
    elif config.vision:
        frame_set = await agent.frames.uniform(question, config.max_frames) if config.max_frames else None
        frames = frame_set.frames if frame_set is not None else ()
        times = frame_set.timestamps if frame_set is not None else ()
    sent = None
    if frames is not None and (frames or times):
        sent = await first_media(
            agent.media, question, frames, agent.frames, count=config.max_frames, duration_s=duration
        )
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
        media=(sent.count, sent.parts) if sent is not None else None,
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
        media_io_kwargs=sent.media_io_kwargs if sent is not None else None,
    )
