"""The episode's first user message: the question, the first frames as the transport sends them,
and the subtitles at their times (the text is :func:`~skillharness.agent.prompt.first_user_message`).
"""

from __future__ import annotations

from typing import Any

from skillharness.agent.config import AgentConfig
from skillharness.agent.episode import Episode
from skillharness.agent.ports import FrameSource, SubtitleSource
from skillharness.agent.prompt import first_user_message
from skillharness.agent.transport import first_media
from skillharness.data.questions import Question
from skillharness.errors import DataError
from skillharness.llm import FrameTransport, MediaConfig
from skillharness.video.frames import uniform_timestamps
from skillharness.video.types import Frame

__all__ = ["first_message"]


async def _first_frames(
    question: Question, episode: Episode, config: AgentConfig, media: MediaConfig, source: FrameSource
) -> tuple[tuple[Frame, ...] | None, tuple[float, ...]]:
    """The first message's frames (None: vision off; none decoded when the server decodes the video
    itself) and timestamps."""
    frames: tuple[Frame, ...] | None = () if config.vision else None
    try:
        episode.duration_s = await source.duration_s(question)
        count = min(config.initial_frames, config.max_frames)
        if config.vision and count > 0 and media.transport is not FrameTransport.VIDEO_URL:
            frame_set = await source.uniform(question, count)
            episode.frames_used = len(frame_set.requested_s)
            episode.degraded |= frame_set.degraded
            return frame_set.frames, frame_set.timestamps
        return frames, uniform_timestamps(episode.duration_s, count) if count else ()
    except DataError as exc:
        if "video" in exc.context:
            # Absent (locate_video names the video): it may come back (a mount); an infra error,
            # and a resume, which checks every video first, asks again.
            raise
        # Present but unreadable: it passed the start-up check and broke since (replaced,
        # truncated). Asked without it and marked degraded, like a partly decodable video: an
        # infra error would be asked again by every resume, and fail again, forever.
        episode.degraded = True
        return frames, ()


async def first_message(
    question: Question,
    episode: Episode,
    *,
    config: AgentConfig,
    media: MediaConfig,
    frames: FrameSource,
    subtitles: SubtitleSource | None,
) -> dict[str, Any]:
    """The first user message, written to the trace; the episode keeps its ``media_io_kwargs``.

    Under ``video_url`` the server picks the frames: the trace and the subtitles name the times our
    own uniform rule gives for the frame count asked, which is what the simulator shows.
    """
    shown, times = await _first_frames(question, episode, config, media, frames)
    sent = None
    if shown is not None and (shown or times):
        count = min(config.initial_frames, config.max_frames)
        sent = await first_media(media, question, shown, frames, count=count, duration_s=episode.duration_s)
        episode.media_io_kwargs = sent.media_io_kwargs
        if media.transport is FrameTransport.VIDEO_URL and sent.count:
            episode.frames_used, times = sent.count, uniform_timestamps(episode.duration_s, sent.count)
    lines = None
    if config.subtitles and subtitles is not None:
        lines = await subtitles.lines_at(question, times) if times else ()
    message = first_user_message(
        question,
        duration_s=episode.duration_s,
        timestamps=times,
        frames=shown,
        subtitles=lines,
        subtitle_chars=config.max_subtitle_chars,
        media=(sent.count, sent.parts) if sent is not None else None,
    )
    seen = tuple(times) if sent is not None and sent.count else ()  # vision off: times place subtitles
    await episode.first_step(message, frames_shown=seen, subtitles=tuple(lines or ()))
    return message
