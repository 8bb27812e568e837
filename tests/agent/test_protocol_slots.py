"""The bundle under a reference protocol: with ``agent.protocol_bundle_slot: none`` the request is
upstream's byte for byte; with ``auto`` it differs from the plain request only in the slot
docs/protocols.md names for that protocol (lmms-eval: videomme's ``post_prompt``; VLMEvalKit: its
system prompt); a protocol without a slot is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_lmms_eval_video_url import UPSTREAM, _Files, _fragment, _question, _Recorder, _Sink
from test_protocols import CAPTURED, _source
from test_protocols import _question as _cook_question

from skillharness.agent import Agent, AgentConfig, ProtocolName
from skillharness.agent.prompt import system_message
from skillharness.agent.protocols import ReferenceOptions, build_turn
from skillharness.agent.protocols.prompts import LMMS_EVAL_POST_PROMPT
from skillharness.agent.protocols.slots import BundleSlot, BundleSlotError, check_bundle_slot
from skillharness.llm import FrameTransport, MediaConfig, request_body
from skillharness.skills.bundle import Bundle
from skillharness.video import FramesConfig

BUNDLE_TEXT = "Count every object twice.\n\nSkill: look at the hands."


def _options(protocol: ProtocolName, slot: BundleSlot, *, subtitles: bool = False) -> ReferenceOptions:
    frames = FramesConfig(longest_side=48)
    return ReferenceOptions(
        protocol, None, True, subtitles, frames, bundle_text=BUNDLE_TEXT, bundle_slot=slot
    )


async def _sent(bundle: Bundle, slot: BundleSlot) -> str:
    """The wire body of the Video-MME pass_video_url case (the upstream capture) under ``slot``."""
    case = next(c for c in UPSTREAM["cases"] if c["name"] == "videomme")
    model = _Recorder()
    config = AgentConfig(protocol=ProtocolName.LMMS_EVAL, subtitles=False, protocol_bundle_slot=slot)
    media = MediaConfig(transport=FrameTransport.VIDEO_URL)
    agent = Agent(model, "sim-vl", bundle, _Files(case["video"]), None, config, media=media)
    prediction = await agent.answer(_question("videomme"), run_id="r", sample_idx=0, sink=_Sink())
    assert prediction.status.value == "ok", prediction.error_message
    (request,) = model.requests
    return json.dumps(request_body(request), ensure_ascii=False, separators=(",", ":"), allow_nan=False)


async def test_no_slot_sends_upstreams_bytes_whatever_the_bundle(default_bundle: Bundle) -> None:
    case = next(c for c in UPSTREAM["cases"] if c["name"] == "videomme")
    sent, upstream = await _sent(default_bundle, BundleSlot.NONE), json.loads(case["body"])
    ours = {k: v for k, v in json.loads(sent).items() if k not in ("stream", "stream_options")}
    assert ours == upstream
    for key in ("model", "messages", "max_tokens", "media_io_kwargs"):
        assert _fragment(key, upstream[key]) in sent, key  # byte for byte on the wire


async def test_lmms_eval_auto_changes_only_videommes_post_prompt(default_bundle: Bundle) -> None:
    case = next(c for c in UPSTREAM["cases"] if c["name"] == "videomme")
    upstream = json.loads(case["body"])
    ours = json.loads(await _sent(default_bundle, BundleSlot.AUTO))
    ours = {k: v for k, v in ours.items() if k not in ("stream", "stream_options")}
    # Everything but the user text is upstream's: model, max_tokens, media_io_kwargs, the video part.
    text = ours["messages"][0]["content"][-1]["text"]
    plain = upstream["messages"][0]["content"][-1]["text"]
    ours["messages"][0]["content"][-1]["text"] = plain
    assert ours == upstream
    # The text is upstream's with the task yaml's post_prompt replaced by one carrying the bundle.
    assert plain.endswith(LMMS_EVAL_POST_PROMPT)
    question = _question("videomme")
    bundle = system_message(default_bundle.system_prompt, default_bundle.skill(question.task_type).render())
    post_prompt = "\n" + bundle["content"] + LMMS_EVAL_POST_PROMPT
    assert text == plain.removesuffix(LMMS_EVAL_POST_PROMPT) + post_prompt
    assert [m["role"] for m in ours["messages"]] == ["user"]  # still no system message


async def test_lmms_eval_auto_with_frames_changes_only_the_text(cook_media: Path, tmp_path: Path) -> None:
    media = _source(cook_media, tmp_path)
    plain = await build_turn(_cook_question(), media, _options(ProtocolName.LMMS_EVAL, BundleSlot.NONE))
    placed = await build_turn(_cook_question(), media, _options(ProtocolName.LMMS_EVAL, BundleSlot.AUTO))
    assert plain.messages[0]["content"][-1]["text"] == CAPTURED["lmms_eval_text"]["nosub"]  # upstream's
    *frames, text = placed.messages[0]["content"]
    assert frames == plain.messages[0]["content"][:-1]
    expected = CAPTURED["lmms_eval_text"]["nosub"].removesuffix(LMMS_EVAL_POST_PROMPT)
    assert text["text"] == expected + "\n" + BUNDLE_TEXT + LMMS_EVAL_POST_PROMPT
    assert (placed.sampling, placed.frame_indices) == (plain.sampling, plain.frame_indices)


@pytest.mark.parametrize("subtitles", [False, True])
async def test_vlmevalkit_auto_is_its_system_prompt(
    cook_media: Path, tmp_path: Path, subtitles: bool
) -> None:
    media = _source(cook_media, tmp_path)
    plain = await build_turn(
        _cook_question(), media, _options(ProtocolName.VLMEVALKIT, BundleSlot.NONE, subtitles=subtitles)
    )
    placed = await build_turn(
        _cook_question(), media, _options(ProtocolName.VLMEVALKIT, BundleSlot.AUTO, subtitles=subtitles)
    )
    # vlmeval/api/gpt.py prepare_inputs: dict(role='system', content=system_prompt), then the user turn.
    assert placed.messages == ({"role": "system", "content": BUNDLE_TEXT}, *plain.messages)
    assert [p["type"] for p in plain.messages[0]["content"]] == ["image_url"] * 8 + ["text", "text"]


@pytest.mark.parametrize(
    ("protocol", "subtitles", "benchmark", "why"),
    [
        (ProtocolName.OFFICIAL, False, None, "fixed template"),
        (ProtocolName.LMMS_EVAL, True, None, "videomme_w_subtitle"),
        (ProtocolName.LMMS_EVAL, False, "nextqa", "nextqa_mc_test"),
    ],
)
def test_a_protocol_without_a_slot_is_refused(
    protocol: ProtocolName, subtitles: bool, benchmark: str | None, why: str
) -> None:
    with pytest.raises(BundleSlotError) as caught:
        check_bundle_slot(protocol, BundleSlot.AUTO, subtitles=subtitles, benchmark=benchmark)
    message = str(caught.value)
    assert f"agent.protocol {protocol.value} has no slot" in message
    assert why in message
    assert "agent.protocol_bundle_slot: none" in message  # what to do
    # The plain request and our own system slot are always available.
    check_bundle_slot(protocol, BundleSlot.NONE, subtitles=subtitles, benchmark=benchmark)
    check_bundle_slot(protocol, BundleSlot.SYSTEM, subtitles=subtitles, benchmark=benchmark)


async def test_official_auto_fails_before_any_frame_is_read(cook_media: Path, tmp_path: Path) -> None:
    media = _source(cook_media, tmp_path)
    with pytest.raises(BundleSlotError, match="official"):
        await build_turn(_cook_question(), media, _options(ProtocolName.OFFICIAL, BundleSlot.AUTO))
