"""Reference protocols against fixtures captured by running the references' own rules.

``fixtures/protocols/captured.json`` holds what the reference functions (lmms-eval's videomme
utils and OpenAI wrapper, VLMEvalKit's Video-MME dataset, return
for the question and ``sample.srt`` beside it; see docs/protocols.md for the sources.
"""

from __future__ import annotations

import base64
import io
import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from agent_support import question
from PIL import Image

from skillharness.agent import Agent, AgentConfig, StepRole
from skillharness.agent.protocols import ProtocolName, ReferenceOptions, build_turn, lmms_eval_task
from skillharness.agent.protocols.frames import (
    linspace_indices,
    qwen_vl_indices,
    segment_middle_indices,
    vlmevalkit_fps_indices,
    vlmevalkit_indices,
)
from skillharness.agent.protocols.images import qwen_vl_video_size
from skillharness.agent.protocols.prompts import lmms_eval_text, official_text, vlmevalkit_texts
from skillharness.agent.protocols.slots import BundleSlot
from skillharness.agent.protocols.subtitles import (
    LMMS_EVAL_NO_SUBTITLES,
    first_cue_subtitles,
    lmms_eval_subtitles,
)
from skillharness.agent.video import LocalVideos
from skillharness.data.questions import Question
from skillharness.errors import DataError
from skillharness.llm.types import ChatRequest, ChatResponse, SamplingParams, Usage
from skillharness.skills.bundle import Bundle
from skillharness.store import RunLog, RunReader
from skillharness.video import FrameSampler, FramesConfig

FIXTURES = Path(__file__).parent / "fixtures" / "protocols"
CAPTURED = json.loads((FIXTURES / "captured.json").read_text())
SRT = FIXTURES / "sample.srt"


def _question(video: str = "cook") -> Question:
    doc = CAPTURED["question"]
    return Question(
        video_id="001",
        duration="short",
        videoID=video,
        question_id="001-1",
        task_type="Object Recognition",
        question=doc["question"],
        options=tuple(doc["options"]),
        answer="B",
    )


# lmms-eval v0.7.2's chat wrapper through qwen-vl-utils 0.0.14 (decord/torchcodec readers):
# torch.linspace(0, n - 1, 10).round(). With 10 frames the exact values (n - 1) * i / 9 are never
# within 1/18 of a half, so these are their rounded rational values; numpy's int truncation (the
# simple wrapper) gives 27 for 250 frames and drops frame 5 for 11.
QWEN_VL_10 = {
    10: (0, 1, 2, 3, 4, 5, 6, 7, 8, 9),
    11: (0, 1, 2, 3, 4, 6, 7, 8, 9, 10),
    250: (0, 28, 55, 83, 111, 138, 166, 194, 221, 249),
    1799: (0, 200, 400, 599, 799, 999, 1199, 1398, 1598, 1798),
    108000: (0, 12000, 24000, 36000, 48000, 59999, 71999, 83999, 95999, 107999),
}


@pytest.mark.parametrize("total", sorted(QWEN_VL_10))
def test_item1_lmms_eval_frames_are_qwen_vl_rounded_linspace(total: int) -> None:
    assert qwen_vl_indices(total, 10) == QWEN_VL_10[total]


def test_item1_qwen_vl_frame_count_is_rounded_to_even_and_bounded() -> None:
    assert len(qwen_vl_indices(100, 9)) == 8  # round(4.5) * 2: Python rounds half to even
    assert len(qwen_vl_indices(100, 11)) == 12
    assert qwen_vl_indices(100, 32)[:4] == (0, 3, 6, 10)  # 99 * 3 / 31 = 9.58 rounds up
    with pytest.raises(DataError, match="cannot give them"):
        qwen_vl_indices(5, 10)


# fetch_video's smart_resize for video frames (factor 28, 128..768 tokens a frame, 90 % of a
# 128000-token budget over the frames), worked by hand from qwen-vl-utils 0.0.14: (h, w, frames).
QWEN_VL_SIZES = {
    (720, 1280, 10): (560, 1008),  # over 768 tokens: scaled down, floored to 28
    (360, 640, 10): (364, 644),  # inside the budget: rounded to 28
    (64, 96, 10): (280, 392),  # under 128 tokens: scaled up, ceiled to 28
    (720, 1280, 768): (336, 644),  # the total budget binds: 235200 pixels a frame
}


@pytest.mark.parametrize("key", sorted(QWEN_VL_SIZES))
def test_item1_lmms_eval_frames_are_resized_to_the_qwen_vl_budget(key: tuple[int, int, int]) -> None:
    assert qwen_vl_video_size(*key) == QWEN_VL_SIZES[key]


# tricky.srt: CRLF line ends, two cues with the same timing, HTML entities, a cue without the
# font tag overlapping another, a two-line cue, a zero-length cue. What the pinned upstream code
# returns for it (lmms-eval v0.7.2's whole subtitle prompt; VLMEvalKit main's subtitle text for
# 8 frames; the linked slicer's frames and subtitles.txt for 32), captured by running it.
TRICKY = json.loads((FIXTURES / "tricky_subtitles.json").read_text("utf-8"))
TRICKY_SRT = FIXTURES / "tricky.srt"


def _tricky_question() -> Question:
    return Question(
        video_id="1",
        duration="short",
        videoID="tricky",
        question_id="1-1",
        task_type="OCR Problems",
        question="Q?",
        options=("A. a", "B. b", "C. c", "D. d"),
        answer="A",
    )


@pytest.mark.parametrize("key", sorted(TRICKY["lmms_eval"]))
def test_tricky_srt_lmms_eval_prompt(key: str) -> None:
    assert b"\r\n" in TRICKY_SRT.read_bytes()
    fps, total = key.split(":")
    subtitles = lmms_eval_subtitles(TRICKY_SRT, fps=float(fps), total_frames=int(total))
    assert lmms_eval_text(_tricky_question(), subtitles) == TRICKY["lmms_eval"][key]


@pytest.mark.parametrize("key", sorted(TRICKY["vlmevalkit"]))
def test_tricky_srt_vlmevalkit_subtitles(key: str) -> None:
    fps, total = key.split(":")
    indices = vlmevalkit_indices(int(total), 8)
    assert first_cue_subtitles(TRICKY_SRT, fps=float(fps), indices=indices) == TRICKY["vlmevalkit"][key]


@pytest.mark.parametrize("key", sorted(TRICKY["official"]["indices"]))
def test_item4_official_frames_are_the_linked_slicers_segment_middles(key: str) -> None:
    total, count = key.split(":")
    assert list(segment_middle_indices(int(total), int(count))) == TRICKY["official"]["indices"][key]


@pytest.mark.parametrize("key", sorted(TRICKY["official"]["subtitles"]))
def test_item4_official_subtitles_are_the_linked_slicers(key: str) -> None:
    fps, total = key.split(":")
    indices = segment_middle_indices(int(total), 32)
    chosen = first_cue_subtitles(TRICKY_SRT, fps=float(fps), indices=indices)
    assert chosen == TRICKY["official"]["subtitles"][key]
    assert "&amp;" in chosen  # entities kept
    assert len(chosen.split("\n")) > len(set(chosen.split("\n")))  # repeats kept


@pytest.mark.parametrize("total", sorted(CAPTURED["indices"]["linspace32"], key=int))
def test_linspace_indices_match_numpy_rule(total: str) -> None:
    assert list(linspace_indices(int(total), 32)) == CAPTURED["indices"]["linspace32"][total]


@pytest.mark.parametrize("total", sorted(CAPTURED["indices"]["vlmevalkit8"], key=int))
def test_vlmevalkit_indices_match(total: str) -> None:
    assert list(vlmevalkit_indices(int(total), 8)) == CAPTURED["indices"]["vlmevalkit8"][total]


def test_vlmevalkit_fps_rule_and_bad_input() -> None:
    assert vlmevalkit_fps_indices(100, 25.0, 1.0) == (0, 25, 50, 75)
    with pytest.raises(DataError, match="0 frames requested"):
        linspace_indices(10, 0)
    with pytest.raises(DataError, match="nothing to sample"):
        vlmevalkit_indices(0, 8)


@pytest.mark.parametrize("key", sorted(CAPTURED["lmms_eval_subtitles"]))
def test_lmms_eval_subtitle_rule(key: str) -> None:
    fps, total = key.split(":")
    chosen = lmms_eval_subtitles(SRT, fps=float(fps), total_frames=int(total))
    assert chosen == CAPTURED["lmms_eval_subtitles"][key]


def test_lmms_eval_without_a_subtitle_file(tmp_path: Path) -> None:
    assert lmms_eval_subtitles(tmp_path / "none.srt", fps=25.0, total_frames=100) == LMMS_EVAL_NO_SUBTITLES
    assert lmms_eval_subtitles(None, fps=25.0, total_frames=100) == "No subtitles available"


def test_lmms_eval_malformed_timing_names_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.srt"
    bad.write_text("1\n00:00:01.000 --> 00:00:02,000\ntext\n")
    with pytest.raises(DataError, match=r"bad\.srt"):
        lmms_eval_subtitles(bad, fps=25.0, total_frames=100)


@pytest.mark.parametrize("key", sorted(CAPTURED["vlmevalkit_subtitles"]))
def test_vlmevalkit_subtitle_rule(key: str) -> None:
    fps, total = key.split(":")
    indices = vlmevalkit_indices(int(total), 8)
    assert first_cue_subtitles(SRT, fps=float(fps), indices=indices) == CAPTURED["vlmevalkit_subtitles"][key]


def test_rendered_prompts_match_the_references() -> None:
    question = _question()
    texts = CAPTURED["lmms_eval_text"]
    assert lmms_eval_text(question, None) == texts["nosub"]
    subs = lmms_eval_subtitles(SRT, fps=10.0, total_frames=200)
    assert lmms_eval_text(question, subs) == texts["sub"]
    assert lmms_eval_text(question, LMMS_EVAL_NO_SUBTITLES) == texts["missing"]
    assert list(vlmevalkit_texts(question, None)) == CAPTURED["vlmevalkit_texts"]["nosub"]
    vsubs = first_cue_subtitles(SRT, fps=10.0, indices=vlmevalkit_indices(200, 8))
    assert list(vlmevalkit_texts(question, vsubs)) == CAPTURED["vlmevalkit_texts"]["sub"]


def test_official_prompt_is_the_readme_example_shape() -> None:
    text = official_text(_question(), None)
    assert text.startswith(
        "Select the best answer to the following multiple-choice question based on the video."
    )
    assert text.endswith("D. Nothing at all.\nThe best answer is:")
    assert official_text(_question(), "hello").startswith(
        "This video's subtitles are listed below:\nhello\nSelect"
    )


def _options(
    protocol: ProtocolName, *, subtitles: bool = True, system: str | None = None
) -> ReferenceOptions:
    slot = BundleSlot.SYSTEM if system is not None else BundleSlot.NONE
    frames = FramesConfig(longest_side=48)
    return ReferenceOptions(protocol, None, True, subtitles, frames, bundle_text=system, bundle_slot=slot)


def _source(root: Path, tmp_path: Path) -> LocalVideos:
    sampler = FrameSampler(FramesConfig(cache_dir=tmp_path / "frames"))
    return LocalVideos(sampler, root / "videos", root / "subtitles")


def _decoded(url: str, mime: str) -> Image.Image:
    prefix = f"data:{mime};base64,"
    assert url.startswith(prefix)
    return Image.open(io.BytesIO(base64.b64decode(url[len(prefix) :])))


async def test_item1_lmms_eval_turn_is_the_chat_wrapper_request(cook_media: Path, tmp_path: Path) -> None:
    turn = await build_turn(_question(), _source(cook_media, tmp_path), _options(ProtocolName.LMMS_EVAL))
    assert len(turn.messages) == 1
    assert turn.messages[0]["role"] == "user"
    content = turn.messages[0]["content"]
    assert content[-1] == {"type": "text", "text": CAPTURED["lmms_eval_text"]["sub"]}  # frames first
    assert turn.frame_indices == (0, 22, 44, 66, 88, 111, 133, 155, 177, 199)
    images = [part["image_url"]["url"] for part in content[:-1]]
    assert len(images) == 10
    # qwen-vl-utils' smart_resize: 96x64 is under 128 tokens of 28x28, so it grows to 392x280.
    assert all(_decoded(url, "image/png").size == (392, 280) for url in images)
    assert turn.sampling.max_tokens == 16
    assert turn.sampling.temperature == 0.0


async def test_lmms_eval_turn_without_subtitles_and_with_a_bundle_slot(
    cook_media: Path, tmp_path: Path
) -> None:
    options = _options(ProtocolName.LMMS_EVAL, subtitles=False, system="evolving text")
    turn = await build_turn(_question(), _source(cook_media, tmp_path), options)
    assert turn.messages[0] == {"role": "system", "content": "evolving text"}
    assert turn.messages[1]["content"][-1]["text"] == CAPTURED["lmms_eval_text"]["nosub"]


async def test_item3_vlmevalkit_turn_sends_frames_then_its_texts(cook_media: Path, tmp_path: Path) -> None:
    turn = await build_turn(_question(), _source(cook_media, tmp_path), _options(ProtocolName.VLMEVALKIT))
    content = turn.messages[0]["content"]
    kinds = [part["type"] for part in content]
    # VLMEvalKit main skips the empty SYS text part; its frames are not resized, only a shorter
    # side under 100 px is scaled up (64 -> 100).
    assert kinds == ["image_url"] * 8 + ["text", "text"]
    system, *texts = CAPTURED["vlmevalkit_texts"]["sub"]
    assert system == ""
    assert [content[-2]["text"], content[-1]["text"]] == texts
    assert all(part["image_url"]["detail"] == "low" for part in content[:8])
    assert _decoded(content[0]["image_url"]["url"], "image/jpeg").size == (150, 100)
    assert turn.sampling.max_tokens == 2048


async def test_official_turn_sends_frames_then_the_readme_prompt(cook_media: Path, tmp_path: Path) -> None:
    turn = await build_turn(_question(), _source(cook_media, tmp_path), _options(ProtocolName.OFFICIAL))
    content = turn.messages[0]["content"]
    assert [part["type"] for part in content] == ["image_url"] * 32 + ["text"]
    assert list(turn.frame_indices) == TRICKY["official"]["indices"]["200:32"]  # the slicer's frames
    assert max(_decoded(content[0]["image_url"]["url"], "image/jpeg").size) == 48
    assert content[-1]["text"].startswith("This video's subtitles are listed below:\nWelcome to the kitchen.")


@dataclass
class _Recorder:
    replies: list[str]
    requests: list[ChatRequest] = field(default_factory=list)

    async def complete(self, request: ChatRequest) -> ChatResponse:
        self.requests.append(request)
        return ChatResponse(
            content=self.replies.pop(0),
            finish_reason="stop",
            usage=Usage(prompt_tokens=5, completion_tokens=1),
        )


@pytest.mark.parametrize(
    ("reply", "status", "answer"), [("B", "ok", "B"), ("I am not sure.", "parse_error", None)]
)
async def test_agent_under_lmms_eval_sends_one_plain_turn(
    videos: LocalVideos,
    default_bundle: Bundle,
    run_log: RunLog,
    sqlite_url: str,
    reply: str,
    status: str,
    answer: str | None,
) -> None:
    model = _Recorder([reply])
    config = AgentConfig(protocol=ProtocolName.LMMS_EVAL, protocol_frames=4)
    agent = Agent(model, "sim-vl", default_bundle, videos, videos, config)
    prediction = await agent.answer(question("q1"), run_id="run-1", sample_idx=0, sink=run_log)
    (request,) = model.requests
    assert request.tools is None
    assert request.tool_choice is None
    assert [m["role"] for m in request.messages] == ["user"]  # no system message, no bundle text
    assert default_bundle.system_prompt not in json.dumps(request.messages)
    assert request.sampling == SamplingParams(temperature=0.0, max_tokens=16)
    assert prediction.status.value == status, prediction.error_message
    assert prediction.answer == answer
    await run_log.flush()
    with RunReader(sqlite_url) as reader:
        steps = reader.trace("run-1", "q1")
    assert [s.role for s in steps] == [StepRole.USER, StepRole.ASSISTANT]
    assert steps[1].content == reply  # the raw text the reference scorers read
    assert steps[0].content.startswith("This video's subtitles are listed below: \n")


def test_vlmevalkit_with_subtitles_on_but_no_file_keeps_its_subtitle_template(tmp_path: Path) -> None:
    assert first_cue_subtitles(tmp_path / "none.srt", fps=25.0, indices=(1, 2)) == ""
    _, template, _ = vlmevalkit_texts(_question(), "")
    assert template.startswith(
        "\nThese are the frames of a video. This video's subtitles are listed below:\n\n"
    )


async def test_agent_under_lmms_eval_asks_with_its_benchmarks_own_task(
    videos: LocalVideos, default_bundle: Bundle, run_log: RunLog
) -> None:
    """The agent passes data.benchmark to the reference turn: an MVBench question is asked with
    lmms-eval's mvbench request (its prompt and max tokens), not Video-MME's."""
    model = _Recorder(["(B) something", "B"])
    config = AgentConfig(protocol=ProtocolName.LMMS_EVAL, protocol_frames=4, subtitles=False)
    asked = question("q1")
    mvbench = Agent(model, "sim-vl", default_bundle, videos, None, config, benchmark="mvbench")
    first = await mvbench.answer(asked, run_id="run-1", sample_idx=0, sink=run_log)
    videomme = Agent(model, "sim-vl", default_bundle, videos, None, config)
    second = await videomme.answer(asked, run_id="run-1", sample_idx=1, sink=run_log)
    assert (first.status.value, second.status.value) == ("ok", "ok"), (
        first.error_message,
        second.error_message,
    )
    task = lmms_eval_task("mvbench")
    assert task is not None
    texts = [r.messages[0]["content"][-1]["text"] for r in model.requests]
    assert texts[0] == task.text(asked, None)
    assert texts[1] != texts[0]
    assert [r.sampling.max_tokens for r in model.requests] == [16, 16]  # both lmms-eval tasks ask 16
