"""lmms-eval v0.7.2's ``pass_video_url`` request, against what upstream's own code put on the wire
(``fixtures/protocols/lmms_eval_video_url.json``, written by ``capture_lmms_eval_video_url.py``)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from skillharness.agent import Agent, AgentConfig, Prediction, ProtocolName, TraceStep
from skillharness.data.questions import OPTION_LETTERS, Question
from skillharness.llm import FrameTransport, MediaConfig, request_body
from skillharness.llm.types import ChatRequest, ChatResponse, Usage
from skillharness.skills.bundle import Bundle
from skillharness.video import Frame, FrameLayout

FIXTURES = Path(__file__).parent / "fixtures" / "protocols"
UPSTREAM = json.loads((FIXTURES / "lmms_eval_video_url.json").read_text(encoding="utf-8"))
VIDEO_MME = json.loads((FIXTURES / "captured.json").read_text(encoding="utf-8"))["question"]
DOCS = json.loads((FIXTURES / "lmms_eval_task_docs.json").read_text(encoding="utf-8"))["docs"]
BENCHMARK = {"videomme": None, "videomme_32": None, "nextqa": "nextqa", "mvbench": "mvbench"}


def _question(case: str) -> Question:
    if BENCHMARK[case] is None:
        doc = {"question": VIDEO_MME["question"], "options": list(VIDEO_MME["options"])}
        options = tuple(doc["options"])
    else:
        doc = DOCS[BENCHMARK[case]][0]["ours"]
        options = tuple(f"{OPTION_LETTERS[i]}. {text}" for i, text in enumerate(doc["options"]))
    clip = {"clip_start": 2.0, "clip_end": 4.0} if case == "mvbench" else {}  # its task ignores it
    return Question(
        video_id="v1",
        duration="short",
        videoID="v1",
        question_id="q1",
        task_type="Counting Problem",
        question=doc["question"],
        options=options,
        answer="A",
        **clip,  # type: ignore[arg-type]
    )


class _Files:
    """The case's video path; nothing is decoded (the server decodes the file)."""

    def __init__(self, path: str) -> None:
        self.path = Path(path)

    @property
    def videos_dir(self) -> Path:
        return self.path.parent

    def video_path(self, question: Question) -> Path:
        return self.path

    async def layout(self, question: Question) -> FrameLayout:
        return FrameLayout(300, 30.0)

    async def frames_at(
        self, question: Question, indices: Sequence[int], layout: FrameLayout
    ) -> list[np.ndarray]:
        raise AssertionError("pass_video_url decodes no frame on the client")

    async def frame_indices(
        self, question: Question, frames: Sequence[Frame]
    ) -> tuple[FrameLayout, tuple[int, ...]]:
        raise AssertionError("pass_video_url names no frame")

    def subtitle_file(self, question: Question) -> Path | None:
        return None


class _Sink:
    async def write_step(self, step: TraceStep) -> None:
        return None

    async def write_prediction(self, prediction: Prediction) -> None:
        return None


class _Recorder:
    def __init__(self) -> None:
        self.requests: list[ChatRequest] = []

    async def complete(self, request: ChatRequest) -> ChatResponse:
        self.requests.append(request)
        return ChatResponse(
            content="A", finish_reason="stop", usage=Usage(prompt_tokens=5, completion_tokens=1)
        )


async def _ours(case: dict[str, Any], bundle: Bundle) -> str:
    model = _Recorder()
    frames = None if case["max_frames_num"] == 10 else case["max_frames_num"]  # 10: the wrapper's default
    config = AgentConfig(protocol=ProtocolName.LMMS_EVAL, protocol_frames=frames, subtitles=False)
    media = MediaConfig(transport=FrameTransport.VIDEO_URL)
    files = _Files(case["video"])
    agent = Agent(
        model, "sim-vl", bundle, files, None, config, benchmark=BENCHMARK[case["name"]], media=media
    )
    prediction = await agent.answer(_question(case["name"]), run_id="r", sample_idx=0, sink=_Sink())
    assert prediction.status.value == "ok", prediction.error_message
    (request,) = model.requests
    # Encoded as EndpointClient encodes every body.
    return json.dumps(request_body(request), ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _fragment(key: str, value: object) -> str:
    return f'"{key}":' + json.dumps(value, ensure_ascii=False, separators=(",", ":"))


@pytest.mark.parametrize("index", range(len(UPSTREAM["cases"])))
async def test_pass_video_url_is_upstreams_request(index: int, default_bundle: Bundle) -> None:
    case = UPSTREAM["cases"][index]
    sent, theirs = await _ours(case, default_bundle), case["body"]
    ours, upstream = json.loads(sent), json.loads(theirs)
    # The transport is ours (a streamed reply with usage); the model's input is upstream's.
    assert {k: v for k, v in ours.items() if k not in ("stream", "stream_options")} == upstream
    # Byte for byte on the wire: the messages (video URL first, then the text), the frame count.
    for key in ("model", "messages", "max_tokens", "media_io_kwargs"):
        fragment = _fragment(key, upstream[key])
        assert fragment in theirs, key
        assert fragment in sent, key
    url = upstream["messages"][0]["content"][0]["video_url"]["url"]
    assert url == "file://" + case["video"]  # upstream does not percent-encode: neither do we here
    assert upstream["temperature"] == ours["temperature"] == 0  # sent as 0.0 by us, 0 by upstream
