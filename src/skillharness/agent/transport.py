"""The first message's frames as the endpoint's transport sends them (``llm.endpoints[].media``).

- ``images``: a label and an ``image_url`` part per frame (:func:`~skillharness.agent.prompt.frame_parts`).
- ``video_frames``: one text part holding the frames' labels, then the JPEG frames as one video part
  ``data:video/jpeg;base64,<frame 1>,<frame 2>,...`` (the frames joined by commas, the form vLLM's
  ``VideoMediaIO.load_base64`` splits), with ``media_io_kwargs.video`` naming each frame's decoded
  index, the source fps, the clip's frame count and duration: ``num_frames: -1`` keeps every frame
  (a positive count keeps only that many, 32 by default). The labels are the images transport's
  text, so the prompt reads the same under both.
- ``video_url``: the video file's URL (``file:///abs/path``, or ``media.url_base`` + its path below
  ``data.videos_dir``) for the server to decode, sampling ``num_frames`` (and ``fps`` when set).

One request carries one ``media_io_kwargs``, which vLLM applies to every video of it, so only the
first message's frames travel as a video; frames a ``get_frames`` call fetches travel as images
under every transport. A clip window cannot be said in a URL (vLLM's ``video_url`` has no start or
end), so ``video_url`` refuses a question with one (:func:`check_questions`).
"""

from __future__ import annotations

import base64
import math
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from skillharness.agent.ports import VideoFiles
from skillharness.agent.prompt import frame_parts
from skillharness.agent.protocols import ProtocolName, lmms_eval_task
from skillharness.data.questions import Question
from skillharness.errors import ConfigError
from skillharness.llm.media import FrameTransport, MediaConfig
from skillharness.llm.roles import FRAME_LABEL
from skillharness.video import FrameLayout
from skillharness.video.types import Frame

__all__ = [
    "FramesMedia",
    "check_protocol",
    "check_questions",
    "file_url",
    "first_media",
    "refuse_window",
    "server_frame_count",
    "video_frames_kwargs",
    "video_frames_parts",
    "video_url",
    "video_url_kwargs",
    "video_url_part",
]

_KEY = "llm.endpoints[].media.transport"


@dataclass(frozen=True)
class FramesMedia:
    """The first message's frames as sent: how many the text announces, the content parts after the
    text, and the request-level ``media_io_kwargs`` (None for images)."""

    count: int
    parts: tuple[dict[str, Any], ...]
    media_io_kwargs: dict[str, dict[str, Any]] | None = None


def video_frames_parts(frames: Sequence[Frame]) -> tuple[dict[str, Any], ...]:
    """The frames' labels as one text part, then the frames as one ``video/jpeg`` video part."""
    labels = "\n".join(FRAME_LABEL.format(seconds=frame.timestamp_s) for frame in frames)
    jpegs = ",".join(base64.b64encode(frame.jpeg).decode("ascii") for frame in frames)
    return (
        {"type": "text", "text": labels},
        {"type": "video_url", "video_url": {"url": "data:video/jpeg;base64," + jpegs}},
    )


def video_frames_kwargs(
    indices: Sequence[int], layout: FrameLayout, duration_s: float
) -> dict[str, dict[str, Any]]:
    """``media_io_kwargs`` of a frame-list video: every frame kept, and what vLLM's video metadata
    says of them (Qwen3-VL's timestamps are ``frames_indices[i] / fps``)."""
    return {
        "video": {
            "num_frames": -1,
            "fps": layout.fps,
            "frames_indices": list(indices),
            "total_num_frames": layout.total_frames,
            "duration": duration_s,
        }
    }


def file_url(path: Path) -> str:
    """``file:///abs/path``, percent-encoded (a space is ``%20``), as a server decodes it."""
    return Path(os.path.abspath(path)).as_uri()


def video_url(path: Path, videos_dir: Path, media: MediaConfig) -> str:
    """The URL the server reads ``path`` at: under ``media.url_base`` when set, else ``file://``."""
    if media.url_base is None:
        return file_url(path)
    try:
        below = Path(os.path.abspath(path)).relative_to(os.path.abspath(videos_dir))
    except ValueError as exc:
        raise ConfigError(
            f"video {path} is not below data.videos_dir {videos_dir}: llm.endpoints[].media.url_base "
            "cannot name it",
            file=str(path),
        ) from exc
    return media.url_base + quote(below.as_posix())


def video_url_part(url: str) -> dict[str, Any]:
    return {"type": "video_url", "video_url": {"url": url}}


def server_frame_count(count: int, duration_s: float, fps: float | None) -> int:
    """Frames a server asked for ``count`` (and ``fps``) samples, by vLLM's default loader's rule:
    ``count``, at most ``floor(duration x fps)`` (and at least one) when a rate is sent."""
    if fps is None:
        return count
    return min(count, max(1, math.floor(duration_s * fps)))


def video_url_kwargs(count: int, fps: float | None) -> dict[str, dict[str, Any]]:
    video: dict[str, Any] = {"num_frames": count}
    if fps is not None:
        video["fps"] = fps
    return {"video": video}


async def first_media(
    media: MediaConfig,
    question: Question,
    frames: Sequence[Frame],
    source: object,
    *,
    count: int,
    duration_s: float,
) -> FramesMedia:
    """The first message's ``frames`` (``video_url``: ``count`` frames the server samples) as
    ``media`` sends them. ``source`` must be :class:`VideoFiles` for the video transports."""
    if media.transport is FrameTransport.IMAGES:
        return FramesMedia(len(frames), tuple(frame_parts(frames)))
    if not isinstance(source, VideoFiles):
        raise ConfigError(f"{_KEY} {media.transport.value} needs the questions' video files on this machine")
    if media.transport is FrameTransport.VIDEO_FRAMES:
        if not frames:
            return FramesMedia(0, ())
        layout, indices = await source.frame_indices(question, frames)
        kwargs = video_frames_kwargs(indices, layout, duration_s)
        return FramesMedia(len(frames), video_frames_parts(frames), kwargs)
    refuse_window(question)
    if count < 1:
        return FramesMedia(0, ())
    url = video_url(source.video_path(question), source.videos_dir, media)
    shown = server_frame_count(count, duration_s, media.fps)
    return FramesMedia(shown, (video_url_part(url),), video_url_kwargs(count, media.fps))


def _clip(question: Question) -> str | None:
    if question.clip_start is None:
        return None
    window = f"[{question.clip_start:g}s, {question.clip_end:g}s]"
    return f"{question.question_id} (clip {window} of {question.videoID})"


def _window_error(clips: Sequence[str]) -> ConfigError:
    listed = ", ".join(clips[:10]) + (" ..." if len(clips) > 10 else "")
    return ConfigError(
        f"{len(clips)} question(s) ask about a clip of their video: {listed}; {_KEY} video_url sends the "
        "whole file for the server to decode, and a video URL names no start or end, so they would see "
        "the whole video. Use transport video_frames (the clip's frames, cut here) or images for them",
        questions=list(clips),
        key=_KEY,
    )


def refuse_window(question: Question) -> None:
    """ConfigError when ``question`` is about a clip, which a video URL cannot say."""
    clip = _clip(question)
    if clip is not None:
        raise _window_error([clip])


def check_protocol(protocol: ProtocolName, media: MediaConfig) -> None:
    """ConfigError when a reference protocol has no request of ``media``'s transport: only
    lmms-eval has a server-decoded mode (``pass_video_url``), and none sends frames as a video."""
    transport = media.transport
    if protocol is ProtocolName.SKILLHARNESS or transport is FrameTransport.IMAGES:
        return
    if protocol is ProtocolName.LMMS_EVAL and transport is FrameTransport.VIDEO_URL:
        return
    lmms_eval = protocol is ProtocolName.LMMS_EVAL
    offered = "images or video_url (its pass_video_url mode)" if lmms_eval else "images"
    raise ConfigError(
        f"agent.protocol {protocol.value} has no request with {_KEY} {transport.value}: the reference "
        f"sends {offered}; set the endpoints' media.transport to that, or agent.protocol: skillharness",
        key=_KEY,
    )


def check_questions(
    questions: Iterable[Question], media: MediaConfig, protocol: ProtocolName, benchmark: str | None
) -> None:
    """Refuse, before any is asked, the questions the run's transport cannot send as asked: under
    ``video_url``, a question about a clip (as the protocol sees it: lmms-eval's MVBench task reads
    the whole video)."""
    check_protocol(protocol, media)
    if media.transport is not FrameTransport.VIDEO_URL:
        return
    task = lmms_eval_task(benchmark) if protocol is ProtocolName.LMMS_EVAL else None
    asked = (task.asked(q) if task is not None else q for q in questions)
    clips = [clip for clip in map(_clip, asked) if clip is not None]
    if clips:
        raise _window_error(clips)
