"""The simulator takes the three transports the agent sends and answers them as it answers images
(same frames seen, same behaviour), and refuses a malformed video part with a 400 naming it."""

from __future__ import annotations

import base64
import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from bench_support import Bench
from skillharness.agent import Agent, AgentConfig, LocalVideos, Prediction, TraceStep
from skillharness.data.loader import load_questions
from skillharness.data.questions import Question
from skillharness.llm import FrameTransport, MediaConfig, request_body
from skillharness.llm.types import ChatRequest, ChatResponse
from skillharness.sim import SimConfig, SimServer
from skillharness.skills import Bundle
from skillharness.video import FrameSampler, FramesConfig


class _Discard:
    """A trace sink keeping nothing: only the request is looked at here."""

    async def write_step(self, step: TraceStep) -> None:
        return None

    async def write_prediction(self, prediction: Prediction) -> None:
        return None


class _FirstRequest:
    """A model that keeps the agent's first request and ends the episode there."""

    def __init__(self) -> None:
        self.request: ChatRequest | None = None

    async def complete(self, request: ChatRequest) -> ChatResponse:
        self.request = request
        raise RuntimeError("only the first request is wanted")


async def _first_body(
    question: Question, transport: FrameTransport, bench: Bench, bundle: Bundle, tmp_path: Path
) -> dict[str, Any]:
    videos = LocalVideos(FrameSampler(FramesConfig(cache_dir=tmp_path / "frames")), bench.root / "videos")
    model = _FirstRequest()
    config = AgentConfig(initial_frames=6, max_frames=12, subtitles=False)
    agent = Agent(model, "sim-vl", bundle, videos, None, config, media=MediaConfig(transport=transport))
    await agent.answer(question, run_id="r", sample_idx=0, sink=_Discard())
    assert model.request is not None
    body = request_body(model.request)
    body["stream"] = False
    del body["stream_options"]
    return body


def _post(sim: SimServer, body: dict[str, Any]) -> httpx.Response:
    return httpx.post(f"{sim.base_url}/chat/completions", json=body, timeout=20)


@pytest.fixture
def bodies(bench: Bench, default_bundle: Bundle, tmp_path: Path) -> Callable[..., Any]:
    async def make(question: Question) -> dict[FrameTransport, dict[str, Any]]:
        return {t: await _first_body(question, t, bench, default_bundle, tmp_path) for t in FrameTransport}

    return make


async def test_the_three_transports_get_the_images_reply(sim: SimServer, bench: Bench, bodies) -> None:
    for question in load_questions(bench.questions)[:6]:
        sent = await bodies(question)
        replies = {}
        for transport, body in sent.items():
            response = _post(sim, body)
            assert response.status_code == 200, response.text
            replies[transport] = response.json()
        message = {t: r["choices"][0]["message"] for t, r in replies.items()}
        assert message[FrameTransport.VIDEO_FRAMES] == message[FrameTransport.IMAGES], question.question_id
        assert message[FrameTransport.VIDEO_URL] == message[FrameTransport.IMAGES], question.question_id
        tokens = {r["usage"]["prompt_tokens"] for r in replies.values()}
        assert len(tokens) == 1  # six frames each, and the same text around them
    # The shapes were the three transports' own (not three images requests).
    kinds = {t: [p["type"] for p in b["messages"][1]["content"]] for t, b in sent.items()}
    assert kinds[FrameTransport.VIDEO_FRAMES] == ["text", "text", "video_url"]
    assert kinds[FrameTransport.VIDEO_URL] == ["text", "video_url"]


def _video(body: dict[str, Any]) -> dict[str, Any]:
    return body["messages"][1]["content"][-1]["video_url"]


def _frames(body: dict[str, Any]) -> list[str]:
    return _video(body)["url"].split(",")[1:]


def _set_frame(index: int, value: str) -> Callable[[dict[str, Any]], None]:
    def change(body: dict[str, Any]) -> None:
        frames = _frames(body)
        frames[index] = value
        _video(body)["url"] = "data:video/jpeg;base64," + ",".join(frames)

    return change


def _kwarg(name: str, value: object) -> Callable[[dict[str, Any]], None]:
    def change(body: dict[str, Any]) -> None:
        body["media_io_kwargs"]["video"][name] = value

    return change


def _second_video(body: dict[str, Any]) -> None:
    body["messages"][1]["content"].append(copy.deepcopy(body["messages"][1]["content"][-1]))


PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 16).decode()
FRAME_LIST_FAULTS = {
    "a frame that is not a JPEG": (_set_frame(1, PNG), "frame 1 of the video is not a base64 JPEG"),
    "a frame that is not base64": (_set_frame(2, "@@@"), "frame 2 of the video is not a base64 JPEG"),
    "num_frames below the frames sent": (_kwarg("num_frames", 4), "would keep only the first 4"),
    "num_frames 0": (_kwarg("num_frames", 0), "num_frames must be greater than 0 or -1"),
    "indices of another length": (_kwarg("frames_indices", [1, 2]), "frames_indices must be 6 integers"),
    "indices going back": (_kwarg("frames_indices", [9, 8, 7, 6, 5, 4]), "frames_indices must rise"),
    "indices past the video": (_kwarg("frames_indices", [0, 1, 2, 3, 4, 10**6]), "frames_indices must rise"),
    "fewer frames in the video than sent": (_kwarg("total_num_frames", 3), "total_num_frames must be"),
    "a negative duration": (_kwarg("duration", -1), "duration must be >= 0"),
    "a rate of 0": (_kwarg("fps", 0), "fps must be a positive number"),
    "two videos under one set of indices": (_second_video, "describes one video"),
    "media_io_kwargs not by modality": (
        lambda b: b.update(media_io_kwargs={"video": 3}),
        "keyed by modality",
    ),
    "a video part without a url": (lambda b: _video(b).pop("url"), "needs 'video_url'"),
}


@pytest.mark.parametrize("fault", sorted(FRAME_LIST_FAULTS))
async def test_a_malformed_frame_list_is_a_400_naming_it(
    fault: str, sim: SimServer, bench: Bench, bodies
) -> None:
    body = (await bodies(load_questions(bench.questions)[0]))[FrameTransport.VIDEO_FRAMES]
    assert _post(sim, body).status_code == 200  # the agent's own request is fine
    change, needle = FRAME_LIST_FAULTS[fault]
    change(body)
    response = _post(sim, body)
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert needle in error["message"]
    assert error["code"] == "invalid_media"


URL_FAULTS = {
    "a missing file": ("file:///nowhere/video.mp4", "the video /nowhere/video.mp4 does not exist"),
    "a relative file URL": ("file://videos/a.mp4", "must name an absolute local path"),
    "another scheme": ("ftp://host/a.mp4", "must be an http(s), file:// or data: URL"),
    "video data that is not base64": ("data:video/mp4;base64,@@@", "not base64"),
}


@pytest.mark.parametrize("fault", sorted(URL_FAULTS))
async def test_a_video_url_the_server_cannot_read_is_a_400(
    fault: str, sim: SimServer, bench: Bench, bodies
) -> None:
    body = (await bodies(load_questions(bench.questions)[0]))[FrameTransport.VIDEO_URL]
    url, needle = URL_FAULTS[fault]
    _video(body)["url"] = url
    response = _post(sim, body)
    assert response.status_code == 400, response.text
    assert needle in response.json()["error"]["message"]


async def test_an_http_video_url_is_taken_without_being_fetched(sim: SimServer, bench: Bench, bodies) -> None:
    body = (await bodies(load_questions(bench.questions)[0]))[FrameTransport.VIDEO_URL]
    _video(body)["url"] = "http://files.invalid/videos/a.mp4"  # nothing listens there
    response = _post(sim, body)
    assert response.status_code == 200, response.text
    body["media_io_kwargs"] = {"video": {"num_frames": 0}}
    assert "greater than 0 or -1" in _post(sim, body).json()["error"]["message"]


@pytest.mark.sim_world(SimConfig(seed=3, record_requests=True))
async def test_the_recorded_request_is_the_one_sent(sim: SimServer, bench: Bench, bodies) -> None:
    body = (await bodies(load_questions(bench.questions)[0]))[FrameTransport.VIDEO_FRAMES]
    assert _post(sim, body).status_code == 200
    assert json.dumps(sim.state.recorded[-1]) == json.dumps(body)  # the roles' image view is not kept
