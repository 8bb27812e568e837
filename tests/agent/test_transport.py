"""Each transport's parts, exactly: images as today, frames as one video with their indices, a URL the
server decodes; and what a clip window or a reference protocol does under each."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from agent_support import ScriptedModel, answer_reply, question, write_video

from skillharness.agent import Agent, AgentConfig, ProtocolName, check_questions, largest_request
from skillharness.agent.prompt import first_user_message, frame_parts
from skillharness.agent.transport import (
    file_url,
    first_media,
    server_frame_count,
    video_frames_kwargs,
    video_frames_parts,
    video_url,
    video_url_kwargs,
    video_url_part,
)
from skillharness.agent.video import LocalVideos
from skillharness.errors import ConfigError
from skillharness.llm import FrameTransport, MediaConfig
from skillharness.skills.bundle import Bundle
from skillharness.store import RunLog
from skillharness.video import FrameLayout, FrameSampler, FramesConfig

FRAMES = MediaConfig(transport=FrameTransport.VIDEO_FRAMES)
URL = MediaConfig(transport=FrameTransport.VIDEO_URL)


async def test_video_frames_parts_are_the_labels_then_one_jpeg_list(videos: LocalVideos) -> None:
    frames = (await videos.uniform(question(), 4)).frames
    labels, video = video_frames_parts(frames)
    assert labels == {
        "type": "text",
        "text": "[frame at 0.5s]\n[frame at 1.5s]\n[frame at 2.5s]\n[frame at 3.5s]",
    }
    assert set(video) == {"type", "video_url"}
    assert video["type"] == "video_url"
    assert set(video["video_url"]) == {"url"}
    head, _, data = video["video_url"]["url"].partition(",")
    assert head == "data:video/jpeg;base64"
    assert [base64.b64decode(part, validate=True) for part in data.split(",")] == [f.jpeg for f in frames]
    # The images transport's text reads the same: its labels are text parts before each image.
    images = frame_parts(frames)
    assert "\n".join(p["text"] for p in images if p["type"] == "text") == labels["text"]


def test_video_frames_kwargs_name_every_frame_and_the_source() -> None:
    kwargs = video_frames_kwargs((3, 12, 27), FrameLayout(40, 10.0), 4.0)
    assert kwargs == {
        "video": {
            "num_frames": -1,
            "fps": 10.0,
            "frames_indices": [3, 12, 27],
            "total_num_frames": 40,
            "duration": 4.0,
        }
    }
    assert json.dumps(kwargs)  # plain JSON: the request body carries it as is


async def test_frame_indices_are_the_decoded_frames_shown_whole_video_and_clip(
    videos: LocalVideos,
) -> None:
    whole = question()
    frames = (await videos.uniform(whole, 4)).frames  # times 0.5, 1.5, 2.5, 3.5 of a 10 fps video
    layout, indices = await videos.frame_indices(whole, frames)
    assert layout == FrameLayout(40, 10.0)
    assert indices == (5, 15, 25, 35)
    clip = whole.model_copy(update={"clip_start": 1.0, "clip_end": 3.0})
    frames = (await videos.uniform(clip, 4)).frames  # clip times 0.25 .. 1.75: file 1.25 .. 2.75
    layout, indices = await videos.frame_indices(clip, frames)
    assert layout == FrameLayout(20, 10.0)  # the clip's own frames: index 0 is the file's frame 10
    assert indices == (2, 7, 12, 17)
    assert all(i / layout.fps <= f.timestamp_s for i, f in zip(indices, frames, strict=True))


def test_file_url_is_absolute_and_percent_encoded(tmp_path: Path) -> None:
    path = tmp_path / "vidéo 1#x.mp4"
    url = file_url(path)
    assert url.startswith("file:///")
    assert " " not in url
    assert "#x" not in url
    assert Path(unquote(urlsplit(url).path)) == path
    relative = file_url(Path("videos/a.mp4"))
    assert relative == (Path.cwd() / "videos" / "a.mp4").as_uri()


def test_a_url_base_names_the_path_below_the_videos_folder(tmp_path: Path) -> None:
    media = MediaConfig(transport=FrameTransport.VIDEO_URL, url_base="http://files:9000/videos")
    assert media.url_base == "http://files:9000/videos/"
    path = tmp_path / "v" / "sub dir" / "a b.mp4"
    assert video_url(path, tmp_path / "v", media) == "http://files:9000/videos/sub%20dir/a%20b.mp4"
    assert video_url(path, tmp_path / "v", URL) == path.as_uri()
    with pytest.raises(ConfigError, match=r"not below data\.videos_dir"):
        video_url(tmp_path / "elsewhere.mp4", tmp_path / "v", media)


def test_video_url_part_and_its_frame_count() -> None:
    assert video_url_part("file:///v/a.mp4") == {"type": "video_url", "video_url": {"url": "file:///v/a.mp4"}}
    assert video_url_kwargs(8, None) == {"video": {"num_frames": 8}}
    assert video_url_kwargs(8, 0.5) == {"video": {"num_frames": 8, "fps": 0.5}}
    assert server_frame_count(8, 10.0, None) == 8
    assert server_frame_count(8, 10.0, 0.5) == 5  # vLLM's default loader: at most floor(10 s x 0.5)
    assert server_frame_count(8, 1.0, 0.5) == 1  # never none


async def test_images_media_is_todays_parts(videos: LocalVideos) -> None:
    frames = (await videos.uniform(question(), 3)).frames
    sent = await first_media(MediaConfig(), question(), frames, videos, count=3, duration_s=4.0)
    assert sent.parts == tuple(frame_parts(frames))
    assert (sent.count, sent.media_io_kwargs) == (3, None)
    plain = first_user_message(
        question(), duration_s=4.0, timestamps=(1.0,), frames=frames, subtitles=None, subtitle_chars=500
    )
    given = first_user_message(
        question(),
        duration_s=4.0,
        timestamps=(1.0,),
        frames=frames,
        subtitles=None,
        subtitle_chars=500,
        media=(sent.count, sent.parts),
    )
    assert json.dumps(given) == json.dumps(plain)


async def _first_request(agent: Agent, model: ScriptedModel, run_log: RunLog, **q: object) -> dict:
    prediction = await agent.answer(question(**q), run_id="run-1", sample_idx=0, sink=run_log)  # type: ignore[arg-type]
    assert prediction.status.value == "ok", prediction.error_message
    request = model.requests[0]
    return {"content": request.messages[1]["content"], "kwargs": request.media_io_kwargs}


@pytest.mark.parametrize("transport", list(FrameTransport))
async def test_the_agent_sends_its_first_frames_by_the_transport(
    transport: FrameTransport, default_bundle: Bundle, videos: LocalVideos, run_log: RunLog
) -> None:
    model = ScriptedModel({"q1": [answer_reply("B")]})
    config = AgentConfig(initial_frames=4, max_frames=8, max_steps=2)
    agent = Agent(
        model, "sim-vl", default_bundle, videos, videos, config, media=MediaConfig(transport=transport)
    )
    sent = await _first_request(agent, model, run_log)
    text, *parts = sent["content"]
    assert text["text"].count("4 frames sampled uniformly follow, each labelled with its time.") == 1
    kinds = [p["type"] for p in parts]
    if transport is FrameTransport.IMAGES:
        assert kinds == ["text", "image_url"] * 4
        assert sent["kwargs"] is None
    elif transport is FrameTransport.VIDEO_FRAMES:
        assert kinds == ["text", "video_url"]
        assert sent["kwargs"]["video"]["frames_indices"] == [5, 15, 25, 35]
    else:
        assert kinds == ["video_url"]
        assert parts[0]["video_url"]["url"] == (videos.videos_dir / "vid1.mp4").absolute().as_uri()
        assert sent["kwargs"] == {"video": {"num_frames": 4}}


async def test_a_clip_window_under_video_url_is_refused_naming_it(
    default_bundle: Bundle, videos: LocalVideos
) -> None:
    inside = question("q1")
    clip = question("q2").model_copy(update={"clip_start": 1.0, "clip_end": 2.5})
    with pytest.raises(ConfigError, match=r"q2 \(clip \[1s, 2\.5s\] of vid1\)") as caught:
        check_questions([inside, clip], URL, ProtocolName.SKILLHARNESS, None)
    assert "q1" not in str(caught.value)
    assert "video_frames" in str(caught.value)  # the way out
    check_questions([inside, clip], FRAMES, ProtocolName.SKILLHARNESS, None)  # frames cut here: fine
    check_questions([inside, clip], MediaConfig(), ProtocolName.SKILLHARNESS, None)
    # lmms-eval's MVBench task reads the whole video, so its request has no window to lose.
    check_questions([clip], URL, ProtocolName.LMMS_EVAL, "mvbench")
    with pytest.raises(ConfigError, match="q2"):
        check_questions([clip], URL, ProtocolName.LMMS_EVAL, "nextqa")


async def test_the_agent_itself_never_sends_a_clip_as_a_whole_video(
    default_bundle: Bundle, videos: LocalVideos, run_log: RunLog
) -> None:
    model = ScriptedModel({"q1": [answer_reply("B")]})
    agent = Agent(model, "sim-vl", default_bundle, videos, videos, AgentConfig(), media=URL)
    clip = question("q1").model_copy(update={"clip_start": 1.0, "clip_end": 2.5})
    prediction = await agent.answer(clip, run_id="run-1", sample_idx=0, sink=run_log)
    assert prediction.status.value == "infra_error"
    assert prediction.error_class == "ConfigError"
    assert "clip" in (prediction.error_message or "")
    assert model.requests == []


async def test_video_frames_of_a_clip_are_the_clips(
    default_bundle: Bundle, videos: LocalVideos, run_log: RunLog
) -> None:
    model = ScriptedModel({"q1": [answer_reply("B")]})
    config = AgentConfig(initial_frames=4, max_frames=8, max_steps=2)
    agent = Agent(model, "sim-vl", default_bundle, videos, videos, config, media=FRAMES)
    sent = await _first_request(agent, model, run_log, qid="q1")
    clip_model = ScriptedModel({"q1": [answer_reply("B")]})
    clip_agent = Agent(clip_model, "sim-vl", default_bundle, videos, videos, config, media=FRAMES)
    clip = question("q1").model_copy(update={"clip_start": 1.0, "clip_end": 3.0})
    await clip_agent.answer(clip, run_id="run-1", sample_idx=1, sink=run_log)
    video = clip_model.requests[0].media_io_kwargs["video"]  # type: ignore[index]
    assert (video["total_num_frames"], video["duration"], video["frames_indices"]) == (
        20,
        2.0,
        [2, 7, 12, 17],
    )
    assert sent["kwargs"]["video"]["total_num_frames"] == 40


@pytest.mark.parametrize(
    ("protocol", "transport"),
    [
        (ProtocolName.VLMEVALKIT, FrameTransport.VIDEO_URL),
        (ProtocolName.OFFICIAL, FrameTransport.VIDEO_FRAMES),
        (ProtocolName.LMMS_EVAL, FrameTransport.VIDEO_FRAMES),
    ],
)
def test_a_reference_without_the_transport_is_refused_when_the_agent_is_built(
    protocol: ProtocolName, transport: FrameTransport, default_bundle: Bundle, videos: LocalVideos
) -> None:
    config = AgentConfig(protocol=protocol)
    with pytest.raises(ConfigError, match=f"agent.protocol {protocol.value} has no request with"):
        Agent(
            ScriptedModel({}),
            "m",
            default_bundle,
            videos,
            videos,
            config,
            media=MediaConfig(transport=transport),
        )


async def test_tool_frames_stay_images_under_every_transport(
    default_bundle: Bundle, videos: LocalVideos, run_log: RunLog
) -> None:
    from agent_support import tool_reply

    model = ScriptedModel(
        {"q1": [tool_reply("get_frames", {"start_s": 0.5, "end_s": 2.5, "count": 2}), answer_reply("B")]}
    )
    config = AgentConfig(initial_frames=2, max_frames=8, max_steps=3)
    agent = Agent(model, "sim-vl", default_bundle, videos, videos, config, media=FRAMES)
    await agent.answer(question("q1"), run_id="run-1", sample_idx=0, sink=run_log)
    second = model.requests[1]
    videos_sent = [
        p
        for m in second.messages
        if isinstance(m["content"], list)
        for p in m["content"]
        if p["type"] == "video_url"
    ]
    images = [p for p in second.messages[-1]["content"] if p["type"] == "image_url"]
    assert len(videos_sent) == 1
    assert len(images) == 2
    assert second.media_io_kwargs == model.requests[0].media_io_kwargs  # every turn re-sends the video


async def test_a_source_without_files_is_refused_for_a_video_transport(tmp_path: Path) -> None:
    write_video(tmp_path / "videos" / "vid1.mp4")
    local = LocalVideos(FrameSampler(FramesConfig(cache_dir=tmp_path / "f")), tmp_path / "videos")
    frames = (await local.uniform(question(), 2)).frames

    class OnlyFrames:  # a frame source that cannot say where its files are
        pass

    with pytest.raises(ConfigError, match="video_frames needs the questions' video files"):
        await first_media(FRAMES, question(), frames, OnlyFrames(), count=2, duration_s=4.0)


@pytest.mark.parametrize("transport", [FrameTransport.VIDEO_FRAMES, FrameTransport.VIDEO_URL])
async def test_the_largest_request_goes_in_the_runs_transport(
    transport: FrameTransport, default_bundle: Bundle, videos: LocalVideos
) -> None:
    config = AgentConfig(initial_frames=2, max_frames=6)
    agent = Agent(
        ScriptedModel({}), "m", default_bundle, videos, videos, config, media=MediaConfig(transport=transport)
    )
    request = await largest_request(agent, question())
    content = request.messages[1]["content"]
    video = request.media_io_kwargs["video"]  # type: ignore[index]
    if transport is FrameTransport.VIDEO_FRAMES:
        assert [p["type"] for p in content] == ["text", "text", "video_url"]
        assert content[2]["video_url"]["url"].count(",") == 6 == len(video["frames_indices"])
    else:
        assert [p["type"] for p in content] == ["text", "video_url"]
        assert video == {"num_frames": 6}
    assert "6 frames sampled uniformly follow" in content[0]["text"]
