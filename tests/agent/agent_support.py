"""Helpers for the agent tests: a generated video, a scripted chat model, a question."""

from __future__ import annotations

import inspect
import itertools
import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import av
import numpy as np

from skillharness.data.questions import Question
from skillharness.llm.types import ChatRequest, ChatResponse, ToolCall, Usage


def write_video(path: Path, seconds: float = 4.0, fps: int = 10, size: tuple[int, int] = (64, 48)) -> Path:
    """A small real H.264 file whose colour changes every frame."""
    path.parent.mkdir(parents=True, exist_ok=True)
    # faststart puts the index first, so a file cut short still opens (and decodes in part).
    with av.open(str(path), "w", options={"movflags": "+faststart"}) as container:
        stream = container.add_stream("libx264", rate=fps)
        stream.width, stream.height = size
        stream.pix_fmt = "yuv420p"
        stream.options = {"g": str(fps)}  # a keyframe every second
        for index in range(int(seconds * fps)):
            rgb = np.zeros((size[1], size[0], 3), dtype=np.uint8)
            rgb[..., 0] = (index * 7) % 256
            rgb[..., 1] = 255 - (index * 11) % 256
            frame = av.VideoFrame.from_ndarray(rgb, format="rgb24")
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    return path


def question(
    qid: str = "q1", video: str = "vid1", task_type: str = "Counting Problem", answer: str = "B"
) -> Question:
    return Question(
        video_id=video,
        duration="short",
        videoID=video,
        question_id=qid,
        task_type=task_type,
        question=f"How many candles are lit in {qid}?",
        options=("A. One", "B. Candles", "C. Three", "D. Four"),
        answer=answer,
    )


_ids = itertools.count()


def tool_reply(name: str, arguments: object, *, content: str | None = None, tokens: int = 10) -> ChatResponse:
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    call = ToolCall(id=f"call_{next(_ids)}", name=name, arguments=text)
    return ChatResponse(
        content=content,
        tool_calls=(call,),
        finish_reason="tool_calls",
        usage=Usage(prompt_tokens=tokens, completion_tokens=3),
    )


def text_reply(content: str) -> ChatResponse:
    return ChatResponse(
        content=content, finish_reason="stop", usage=Usage(prompt_tokens=10, completion_tokens=3)
    )


def answer_reply(answer: object) -> ChatResponse:
    return tool_reply("submit_answer", {"answer": answer})


Reply = (
    ChatResponse
    | BaseException
    | Callable[[ChatRequest], ChatResponse]
    | Callable[[ChatRequest], Awaitable[ChatResponse]]
)


@dataclass
class ScriptedModel:
    """Replies from a script per question id (found in the first user message), in call order."""

    script: dict[str, Sequence[Reply]]
    requests: list[ChatRequest] = field(default_factory=list)
    calls: dict[str, int] = field(default_factory=dict)

    def question_of(self, request: ChatRequest) -> str:
        first = request.messages[1]["content"]
        text = first if isinstance(first, str) else first[0]["text"]
        return next(qid for qid in self.script if f" in {qid}?" in text)

    async def complete(self, request: ChatRequest) -> ChatResponse:
        self.requests.append(request)
        qid = self.question_of(request)
        index = self.calls.get(qid, 0)
        self.calls[qid] = index + 1
        reply = self.script[qid][index]
        if isinstance(reply, BaseException):
            raise reply
        if callable(reply):
            answered = reply(request)
            return await answered if inspect.isawaitable(answered) else answered
        return reply


@dataclass
class InvalidatingModel(ScriptedModel):
    invalidated: list[ChatRequest] = field(default_factory=list)

    async def invalidate(self, request: ChatRequest) -> None:
        self.invalidated.append(request)
