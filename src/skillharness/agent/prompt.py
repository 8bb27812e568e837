"""The messages the agent starts from: the system prompt and the first user message.

The first user message holds the question, its options verbatim, the video duration, the
uniformly sampled frames as JPEG data URLs (OpenAI ``image_url`` content parts, each preceded by
its timestamp) and, when enabled, the subtitle lines at those times. With ``vision: false`` no
image is sent: the message names the times and shows only the subtitles.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from skillharness.data.questions import Question
from skillharness.llm.roles import FRAME_LABEL
from skillharness.video.types import Frame

__all__ = ["cap_text", "first_user_message", "format_seconds", "frame_parts", "system_message"]


def system_message(system_prompt: str, skill_text: str) -> dict[str, Any]:
    """The bundle's system prompt followed by the question's task-type skill document."""
    parts = [text.strip() for text in (system_prompt, skill_text) if text.strip()]
    return {"role": "system", "content": "\n\n".join(parts)}


def format_seconds(value: float) -> str:
    return f"{value:.1f}s"


def cap_text(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, saying so when it was cut."""
    if len(text) <= limit:
        return text
    return text[: max(0, limit - 20)] + f" …[{len(text) - limit + 20} chars cut]"


def frame_parts(frames: Sequence[Frame]) -> list[dict[str, Any]]:
    """One timestamp text part and one ``image_url`` part per frame."""
    parts: list[dict[str, Any]] = []
    for frame in frames:
        parts.append({"type": "text", "text": FRAME_LABEL.format(seconds=frame.timestamp_s)})
        parts.append({"type": "image_url", "image_url": {"url": frame.data_url()}})
    return parts


def first_user_message(
    question: Question,
    *,
    duration_s: float,
    timestamps: Sequence[float],
    frames: Sequence[Frame] | None,
    subtitles: Sequence[str] | None,
    subtitle_chars: int,
    media: tuple[int, Sequence[dict[str, Any]]] | None = None,
) -> dict[str, Any]:
    """The first user message. ``frames=None`` means vision is off; ``subtitles=None`` means disabled.

    ``media`` is the frames as the endpoint's transport sends them: how many frames the message
    announces and the content parts after the text (:mod:`skillharness.agent.transport`); None
    sends ``frames`` as images, one label and one image part each (:func:`frame_parts`).
    """
    shown, parts = media if media is not None else (len(frames or ()), frame_parts(frames or ()))
    lines = [f"Question: {question.question}", "Options:", *question.options]
    lines.append(f"Video duration: {format_seconds(duration_s)}.")
    times = ", ".join(format_seconds(t) for t in timestamps)
    if frames is None:
        lines.append("Frames are not shown in this run." + (f" Sampled times: {times}." if times else ""))
    elif shown:
        lines.append(f"{shown} frames sampled uniformly follow, each labelled with its time.")
    else:
        lines.append("No frames are shown up front.")
    if subtitles is not None:
        shown_lines = "\n".join(subtitles) if subtitles else "(no subtitles at these times)"
        lines += ["Subtitles at the sampled times:", cap_text(shown_lines, subtitle_chars)]
    lines.append("Use the tools if you need more evidence, then call submit_answer with one option letter.")
    text = "\n".join(lines)
    if frames is None or not parts:
        return {"role": "user", "content": text}
    return {"role": "user", "content": [{"type": "text", "text": text}, *parts]}
