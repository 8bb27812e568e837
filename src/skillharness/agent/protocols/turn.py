"""One reference turn: the single request a reference evaluation would send for a question.

A non-default ``agent.protocol`` replaces the whole agent conversation by this turn: one user
message, no tools, no system message, the reference's text, frame rule, image encoding, subtitle
rule and ``max_tokens``; with ``agent.protocol_bundle_slot`` set, the bundle's text in the slot
:mod:`.slots` resolves (lmms-eval's ``post_prompt``, VLMEvalKit's system prompt, or ours).

lmms-eval's ``pass_video_url`` mode (its chat OpenAI wrapper at v0.7.2, chosen here by the
endpoints' ``media.transport: video_url``) sends the video file's URL instead of frames:
``{"type": "video_url", "video_url": {"url": "file://" + abspath}}`` before the same text, and
``media_io_kwargs: {"video": {"num_frames": <frames>}}``; the server samples the frames.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from skillharness.agent.ports import VideoFiles
from skillharness.agent.protocols.frames import qwen_vl_indices, segment_middle_indices, vlmevalkit_indices
from skillharness.agent.protocols.images import jpeg_data_url, qwen_vl_png_data_url, vlmevalkit_jpeg_data_url
from skillharness.agent.protocols.names import ProtocolName
from skillharness.agent.protocols.prompts import (
    LMMS_EVAL_POST_PROMPT,
    lmms_eval_text,
    official_text,
    vlmevalkit_texts,
)
from skillharness.agent.protocols.slots import BundleSlot, UpstreamSlot, lmms_eval_post_prompt, resolve_slot
from skillharness.agent.protocols.subtitles import first_cue_subtitles, lmms_eval_subtitles
from skillharness.agent.protocols.tasks import LmmsEvalTask, lmms_eval_task
from skillharness.data.questions import Question
from skillharness.errors import ConfigError
from skillharness.llm.types import SamplingParams
from skillharness.video import FrameLayout, FramesConfig

__all__ = [
    "REFERENCE_DEFAULTS",
    "ProtocolName",
    "ReferenceMedia",
    "ReferenceOptions",
    "ReferenceTurn",
    "build_turn",
]


# (frames sent when agent.protocol_frames is unset, max_tokens): lmms-eval's OpenAI wrapper
# default max_frames_num (v0.7.2) and task max_new_tokens; VLMEvalKit's Video-MME 8-frame setting and its
# API wrapper's max_tokens; the official README fixes neither (our choice, see docs/protocols.md).
REFERENCE_DEFAULTS: dict[ProtocolName, tuple[int, int]] = {
    ProtocolName.LMMS_EVAL: (10, 16),
    ProtocolName.VLMEVALKIT: (8, 2048),
    ProtocolName.OFFICIAL: (32, 16),
}


@runtime_checkable
class ReferenceMedia(Protocol):
    """What a reference turn needs of a question's video: frames by index and the subtitle file."""

    async def layout(self, question: Question) -> FrameLayout: ...

    async def frames_at(
        self, question: Question, indices: Sequence[int], layout: FrameLayout
    ) -> list[np.ndarray]: ...

    def subtitle_file(self, question: Question) -> Path | None: ...


@dataclass(frozen=True)
class ReferenceOptions:
    """The agent settings a reference turn reads."""

    protocol: ProtocolName
    frames: int | None  # None: the reference's default count
    vision: bool
    subtitles: bool
    frames_config: FramesConfig
    bundle_text: str | None = None  # the bundle's system prompt and the question's skill
    bundle_slot: BundleSlot = BundleSlot.NONE  # where it goes (.slots); none: not sent
    # The questions' benchmark (data.benchmark: a built-in adapter's name or an adapter file).
    # Under lmms_eval, a benchmark whose adapter describes lmms-eval's own task for it is asked
    # with that task's request; None (or an adapter without one) sends the Video-MME request.
    benchmark: str | None = None
    # lmms-eval's pass_video_url: the video's file:// URL for the server to decode (lmms_eval only).
    pass_video_url: bool = False


@dataclass(frozen=True)
class _Placed:
    """The bundle's text where the slot puts it: a system message, or lmms-eval's post_prompt."""

    system: str | None = None
    post_prompt: str = LMMS_EVAL_POST_PROMPT


def _placed(options: ReferenceOptions) -> _Placed:
    if options.bundle_text is None:
        return _Placed()
    slot = resolve_slot(
        options.protocol, options.bundle_slot, subtitles=options.subtitles, benchmark=options.benchmark
    )
    if slot is UpstreamSlot.POST_PROMPT:
        return _Placed(post_prompt=lmms_eval_post_prompt(options.bundle_text))
    return _Placed(system=options.bundle_text if slot is not None else None)


@dataclass(frozen=True)
class ReferenceTurn:
    """The request to send, and what the trace records of it."""

    messages: tuple[dict[str, Any], ...]
    sampling: SamplingParams
    text: str
    frame_indices: tuple[int, ...]
    frame_times: tuple[float, ...]
    subtitles: tuple[str, ...]
    duration_s: float
    media_io_kwargs: dict[str, dict[str, Any]] | None = None  # pass_video_url's frame count
    server_frames: int = 0  # frames the server is asked to sample (pass_video_url)


def _text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def _video_url(question: Question, media: ReferenceMedia) -> dict[str, Any]:
    """lmms-eval's ``to_openai_messages`` with ``pass_video_url``: a local path becomes
    ``file://`` + its absolute path, as is (no percent-encoding)."""
    if not isinstance(media, VideoFiles):
        raise ConfigError("lmms-eval's pass_video_url needs the questions' video files on this machine")
    return {
        "type": "video_url",
        "video_url": {"url": f"file://{os.path.abspath(media.video_path(question))}"},
    }


def _image(url: str, detail: str | None = None) -> dict[str, Any]:
    image: dict[str, Any] = {"url": url}
    if detail is not None:
        image["detail"] = detail
    return {"type": "image_url", "image_url": image}


async def build_turn(question: Question, media: ReferenceMedia, options: ReferenceOptions) -> ReferenceTurn:
    """The reference request for ``question`` under ``options.protocol`` (not ``skillharness``)."""
    task = lmms_eval_task(options.benchmark) if options.protocol is ProtocolName.LMMS_EVAL else None
    placed = _placed(options)  # a slot the protocol lacks fails here, before any frame is read
    if task is not None:
        return await _task_turn(question, media, options, task, placed)
    layout = await media.layout(question)
    count, max_tokens = REFERENCE_DEFAULTS[options.protocol]
    count = options.frames or count
    if options.pass_video_url:  # lmms-eval's subtitle rule reads the frame count, not the indices
        subtitles = _subtitles(question, media, options, layout, ())
        text = lmms_eval_text(question, subtitles, placed.post_prompt)
        content = [_video_url(question, media), _text(text)] if options.vision else [_text(text)]
        return _url_turn(content, text, options, placed, max_tokens, layout, count, subtitles)
    indices: tuple[int, ...]
    if options.protocol is ProtocolName.LMMS_EVAL:
        indices = qwen_vl_indices(layout.total_frames, count)
    elif options.protocol is ProtocolName.VLMEVALKIT:
        indices = vlmevalkit_indices(layout.total_frames, count)
    else:
        indices = segment_middle_indices(layout.total_frames, count)
    pixels = await media.frames_at(question, indices, layout) if options.vision else []
    subtitles = _subtitles(question, media, options, layout, indices)
    content, text = _content(question, options, pixels, subtitles, placed)
    return _turn(content, text, options, placed, max_tokens, layout, indices, subtitles)


async def _task_turn(
    question: Question, media: ReferenceMedia, options: ReferenceOptions, task: LmmsEvalTask, placed: _Placed
) -> ReferenceTurn:
    """lmms-eval's own task for the benchmark: its frame rule, text and max_new_tokens, sent
    through the same chat wrapper (frames as qwen-vl-utils PNGs, then the text)."""
    asked = task.asked(question)  # MVBench's task reads the whole video, never the clip window
    layout = await media.layout(asked)
    count = options.frames or REFERENCE_DEFAULTS[options.protocol][0]  # the chat wrapper's, per task
    subtitles = task.subtitle_text(media.subtitle_file(asked)) if options.subtitles else None
    text = task.text(asked, subtitles)
    if options.pass_video_url:
        content = [_video_url(asked, media), _text(text)] if options.vision else [_text(text)]
        return _url_turn(content, text, options, placed, task.spec.max_new_tokens, layout, count, subtitles)
    indices = task.frame_indices(layout.total_frames, count)
    pixels = await media.frames_at(asked, indices, layout) if options.vision else []
    content = [*(_image(qwen_vl_png_data_url(p, len(pixels))) for p in pixels), _text(text)]
    return _turn(content, text, options, placed, task.spec.max_new_tokens, layout, indices, subtitles)


def _turn(
    content: list[dict[str, Any]],
    text: str,
    options: ReferenceOptions,
    placed: _Placed,
    max_tokens: int,
    layout: FrameLayout,
    indices: tuple[int, ...],
    subtitles: str | None,
) -> ReferenceTurn:
    messages: list[dict[str, Any]] = [{"role": "user", "content": content}]
    if placed.system:  # VLMEvalKit's prepare_inputs: {"role": "system", "content": system_prompt} first
        messages.insert(0, {"role": "system", "content": placed.system})
    times = tuple(round((i + 0.5) / layout.fps, 6) for i in indices)
    return ReferenceTurn(
        messages=tuple(messages),
        sampling=SamplingParams(temperature=0.0, max_tokens=max_tokens),
        text=text,
        frame_indices=indices if options.vision else (),
        frame_times=times if options.vision else (),
        subtitles=tuple(subtitles.split("\n")) if subtitles else (),
        duration_s=layout.total_frames / layout.fps,
    )


def _url_turn(
    content: list[dict[str, Any]],
    text: str,
    options: ReferenceOptions,
    placed: _Placed,
    max_tokens: int,
    layout: FrameLayout,
    count: int,
    subtitles: str | None,
) -> ReferenceTurn:
    """The pass_video_url turn: the URL and the text, the frame count in ``media_io_kwargs`` (sent
    whenever the mode is on, as upstream does, even with no video in the message)."""
    turn = _turn(content, text, options, placed, max_tokens, layout, (), subtitles)
    kwargs = {"video": {"num_frames": int(count)}}
    return replace(turn, media_io_kwargs=kwargs, server_frames=count if options.vision else 0)


def _subtitles(
    question: Question,
    media: ReferenceMedia,
    options: ReferenceOptions,
    layout: FrameLayout,
    indices: tuple[int, ...],
) -> str | None:
    """The subtitle text of the prompt; None selects the reference's subtitle-free prompt."""
    if not options.subtitles:
        return None
    path = media.subtitle_file(question)
    if path is not None and path.suffix.lower() != ".srt":
        path = None  # both references look for <videoID>.srt only
    if options.protocol is ProtocolName.LMMS_EVAL:
        return lmms_eval_subtitles(path, fps=layout.fps, total_frames=layout.total_frames)
    if options.protocol is ProtocolName.VLMEVALKIT:
        return first_cue_subtitles(path, fps=layout.fps, indices=indices)
    # Official: the linked tool's subtitles.txt for the sent frames; no file, no subtitle block.
    return None if path is None else first_cue_subtitles(path, fps=layout.fps, indices=indices)


def _content(
    question: Question,
    options: ReferenceOptions,
    pixels: list[np.ndarray],
    subtitles: str | None,
    placed: _Placed,
) -> tuple[list[dict[str, Any]], str]:
    """The user message's parts in the reference's order, and its text for the trace."""
    if options.protocol is ProtocolName.LMMS_EVAL:
        # v0.7.2's chat wrapper: the video's frames (resized for their count), then the text.
        text = lmms_eval_text(question, subtitles, placed.post_prompt)
        return [*(_image(qwen_vl_png_data_url(p, len(pixels))) for p in pixels), _text(text)], text
    if options.protocol is ProtocolName.VLMEVALKIT:
        # VLMEvalKit main's wrapper skips empty text parts: its empty SYS part is not sent.
        _system, template, asked = vlmevalkit_texts(question, subtitles)
        images = [_image(vlmevalkit_jpeg_data_url(p), detail="low") for p in pixels]
        return [*images, _text(template), _text(asked)], template + asked
    text = official_text(question, subtitles)
    frames = options.frames_config
    images = [_image(jpeg_data_url(p, frames.longest_side, frames.jpeg_quality)) for p in pixels]
    return [*images, _text(text)], text  # frames, then the prompt
