"""Clip windows: a question about ``[start, end]`` of a video sees only that stretch.

On real H.264 files whose every frame carries its own index (videokit.py): frame ``i`` of the
25 fps test video is on screen during ``[i / 25, (i + 1) / 25)``, so each test reads back which
frame of the file it was given and checks it lies inside the window.
"""

from __future__ import annotations

import io
import math
import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from typer.testing import CliRunner
from videokit import WIDTH, frame_index

from cli_support import command_app
from skillharness.agent import Agent, AgentConfig, Prediction, PredictionStatus, TraceStep
from skillharness.agent.video import LocalVideos, question_window
from skillharness.commands import frames as frames_command
from skillharness.data.questions import Question
from skillharness.errors import DataError
from skillharness.llm import EndpointConfig, LLMConfig, build_chat_model
from skillharness.sim import SimConfig, SimServer
from skillharness.sim.config import AgentConfig as SimAgentConfig
from skillharness.skills.bundle import Bundle
from skillharness.video import (
    DecodePool,
    FrameCache,
    FrameSampler,
    FramesConfig,
    FrameSet,
    SubtitleLine,
    Subtitles,
    Window,
    locate_video,
)
from skillharness.video.cache import VideoIdentity

FPS = 25


def _indices(frame_set: FrameSet) -> list[int]:
    return [frame_index(np.asarray(Image.open(io.BytesIO(f.jpeg)).convert("RGB"))) for f in frame_set.frames]


def _file_index(window: Window | None, t: float) -> int:
    """The frame of the file on screen at window time ``t``."""
    return math.floor(((window.start_s if window else 0.0) + t) * FPS + 1e-9)


@pytest.fixture
def sampler(tmp_path: Path) -> FrameSampler:
    return FrameSampler(FramesConfig(longest_side=WIDTH, jpeg_quality=95, cache_dir=tmp_path / "cache"))


def test_uniform_frames_come_only_from_the_window_on_its_timeline(
    gop_video: Path, sampler: FrameSampler
) -> None:
    window = Window(4.0, 6.0)
    got = sampler.uniform(gop_video, 8, window)
    assert got.duration_s == pytest.approx(2.0)
    assert got.window == window
    assert got.timestamps == tuple(round((i + 0.5) * 2.0 / 8, 6) for i in range(8))
    assert _indices(got) == [_file_index(window, t) for t in got.timestamps]
    assert all(4 * FPS <= i < 6 * FPS for i in _indices(got))
    assert all(0 <= f.pts_s <= f.timestamp_s for f in got.frames), "times are the clip's, from its start"


def test_a_range_is_inside_the_window_and_one_past_it_is_refused(
    gop_video: Path, sampler: FrameSampler
) -> None:
    window = Window(3.0, 7.0)
    got = sampler.range(gop_video, 1.0, 2.0, 5, window)
    assert _indices(got) == [_file_index(window, t) for t in got.timestamps]
    assert all(4 * FPS <= i < 5 * FPS for i in _indices(got))
    with pytest.raises(DataError, match=r"outside the clip \[3s, 7s\]"):
        sampler.range(gop_video, 3.0, 5.0, 2, window)


def test_a_window_past_the_end_is_cut_to_the_video_and_one_after_it_is_refused(
    gop_video: Path, sampler: FrameSampler
) -> None:
    window = Window(8.0, 20.0)
    got = sampler.uniform(gop_video, 4, window)
    assert got.duration_s == pytest.approx(2.0)
    assert all(8 * FPS <= i < 10 * FPS for i in _indices(got))
    with pytest.raises(DataError, match="starts after the end"):
        sampler.uniform(gop_video, 4, Window(12.0, 14.0))
    with pytest.raises(ValueError, match="start < end"):
        Window(5.0, 5.0)


def test_two_windows_of_one_video_never_share_cached_frames(gop_video: Path, sampler: FrameSampler) -> None:
    first, second = Window(1.0, 3.0), Window(5.0, 7.0)
    a = sampler.uniform(gop_video, 4, first)
    b = sampler.uniform(gop_video, 4, second)
    assert a.timestamps == b.timestamps, "the same times on each window's own timeline"
    assert b.from_cache == 0, "the second window's frames are decoded, not the first's served"
    assert set(_indices(a)).isdisjoint(_indices(b))
    again_a, again_b = sampler.uniform(gop_video, 4, first), sampler.uniform(gop_video, 4, second)
    assert (again_a.from_cache, again_b.from_cache) == (4, 4)
    assert (_indices(again_a), _indices(again_b)) == (_indices(a), _indices(b))
    # Nor a window and the whole video at the same time.
    whole = sampler.at(gop_video, [0.5])
    clipped = sampler.at(gop_video, [0.5], first)
    assert clipped.from_cache == 0
    assert (_indices(whole), _indices(clipped)) == ([_file_index(None, 0.5)], [_file_index(first, 0.5)])


def test_the_cache_key_names_the_window() -> None:
    video = VideoIdentity("/v.mp4", 1, 2)
    keys = {
        FrameCache.frame_key(video, 0.5, 448, 85),
        FrameCache.frame_key(video, 0.5, 448, 85, Window(1.0, 3.0)),
        FrameCache.frame_key(video, 0.5, 448, 85, Window(1.0, 3.5)),
        FrameCache.frame_key(video, 0.5, 448, 85, Window(1.5, 3.0)),
    }
    assert len(keys) == 4


@pytest.fixture
def pool(tmp_path: Path) -> Iterator[DecodePool]:
    decode_pool = DecodePool(FramesConfig(longest_side=WIDTH, jpeg_quality=95, cache_dir=tmp_path / "p"), 2)
    yield decode_pool
    decode_pool.close()


def test_worker_processes_sample_the_window_too(gop_video: Path, pool: DecodePool) -> None:
    windows = [Window(2.0, 4.0), None, Window(6.0, 8.0)]
    got = list(pool.map_uniform([gop_video] * 3, 4, windows))
    first, whole, last = got
    assert isinstance(first, FrameSet), first
    assert isinstance(whole, FrameSet), whole
    assert isinstance(last, FrameSet), last
    assert all(2 * FPS <= i < 4 * FPS for i in _indices(first))
    assert all(6 * FPS <= i < 8 * FPS for i in _indices(last))
    assert whole.duration_s == pytest.approx(10.0)


def test_subtitles_are_shifted_by_their_offset_and_cut_to_the_window() -> None:
    lines = (
        SubtitleLine(10.0, 11.0, "before the video"),
        SubtitleLine(11.5, 13.0, "straddles the clip start"),
        SubtitleLine(14.0, 15.0, "inside"),
        SubtitleLine(16.5, 18.0, "straddles the clip end"),
        SubtitleLine(18.0, 19.0, "after the clip"),
    )
    subtitles = Subtitles(None, lines)
    # The file's clock reads 10 s at the video's start; the clip is [2, 7] s of the video.
    seen = subtitles.on_timeline(10.0, Window(2.0, 7.0))
    assert [(line.start_s, line.end_s, line.text) for line in seen.lines] == [
        (0.0, 1.0, "straddles the clip start"),
        (2.0, 3.0, "inside"),
        (4.5, 5.0, "straddles the clip end"),
    ]
    shifted = subtitles.on_timeline(10.0)
    assert [(line.start_s, line.text) for line in shifted.lines][:2] == [
        (0.0, "before the video"),
        (1.5, "straddles the clip start"),
    ]
    assert subtitles.on_timeline() is subtitles


def test_frames_show_writes_the_clips_frames(gop_video: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    args = [
        "frames",
        str(gop_video),
        "--out",
        str(out),
        "--count",
        "4",
        "--clip-start",
        "4",
        "--clip-end",
        "6",
    ]
    args += ["--longest-side", str(WIDTH), "--quality", "95", "--cache-dir", str(tmp_path / "c")]
    result = CliRunner().invoke(command_app(frames_command.register), args)
    assert result.exit_code == 0, result.output
    assert "duration 2.000 s (clip [4s, 6s] of the file" in result.output
    written = sorted(out.glob("*.jpg"))
    assert len(written) == 4
    got = [frame_index(np.asarray(Image.open(p).convert("RGB"))) for p in written]
    assert all(4 * FPS <= i < 6 * FPS for i in got), got
    half = CliRunner().invoke(command_app(frames_command.register), [*args[:6], "--clip-start", "4"])
    assert "--clip-start and --clip-end go together" in str(half.exception)


def test_a_folder_of_frames_is_refused_with_its_task_and_the_fix(tmp_path: Path) -> None:
    (tmp_path / "s08e22_seg02_clip_07").mkdir()
    with pytest.raises(DataError) as caught:
        locate_video(tmp_path, "s08e22_seg02_clip_07", task="Episodic Reasoning")
    message = str(caught.value)
    assert "'Episodic Reasoning'" in message
    assert "folder of frame images" in message
    assert "ffmpeg" in message
    assert "--exclude-task-types" in message
    (tmp_path / "ZS9XR.mp4").write_bytes(b"x")
    assert locate_video(tmp_path, "ZS9XR.mp4") == tmp_path / "ZS9XR.mp4", "a key with its extension"


def _clip_question(start: float | None, end: float | None, **extra: object) -> Question:
    return Question(
        video_id="gop",
        duration="all",
        videoID="gop",
        question_id=f"gop-{start}-{end}",
        task_type="Action Sequence",
        question="What happened first?",
        options=("A. one", "B. two", "C. three"),
        answer="B",
        clip_start=start,
        clip_end=end,
        **extra,  # type: ignore[arg-type]
    )


_SRT = """1
00:00:11,000 --> 00:00:12,500
early line

2
00:00:15,200 --> 00:00:15,800
clip line

3
00:00:17,000 --> 00:00:18,000
late line
"""


async def test_the_agents_source_shows_a_clip_question_only_its_window(
    gop_video: Path, tmp_path: Path
) -> None:
    (tmp_path / "subs").mkdir()
    (tmp_path / "subs" / "gop_en.srt").write_text(_SRT)
    sampler = FrameSampler(FramesConfig(longest_side=WIDTH, jpeg_quality=95, cache_dir=tmp_path / "cache"))
    source = LocalVideos(sampler, gop_video.parent, tmp_path / "subs")
    # The subtitle file's clock reads 10 s at the video's start; the question is about [4, 6] s.
    asked = _clip_question(4.0, 6.0, subtitle_path="gop_en.srt", subtitle_offset=10.0)
    assert question_window(asked) == Window(4.0, 6.0)
    assert question_window(_clip_question(None, None)) is None
    assert await source.duration_s(asked) == pytest.approx(2.0)
    assert await source.duration_s(_clip_question(None, None)) == pytest.approx(10.0)
    assert all(4 * FPS <= i < 6 * FPS for i in _indices(await source.uniform(asked, 6)))
    between = await source.between(asked, 0.5, 1.0, 3)
    assert all(round(4.5 * FPS) <= i < 5 * FPS for i in _indices(between))
    assert await source.lines_between(asked, 0.0, 2.0) == ("[1.2s] clip line",)
    assert await source.lines_between(_clip_question(None, None), 0.0, 10.0) == ()  # no gop.srt
    # The reference protocols' indices: index 0 is the window's first frame, and no index past it.
    layout = await source.layout(asked)
    assert layout.total_frames == 2 * FPS
    (first, last) = await source.frames_at(asked, [0, layout.total_frames - 1], layout)
    assert (frame_index(first), frame_index(last)) == (4 * FPS, 6 * FPS - 1)
    with pytest.raises(DataError, match="outside the clip"):
        await source.frames_at(asked, [layout.total_frames], layout)


async def test_a_subtitle_file_replaced_mid_session_is_read_again(gop_video: Path, tmp_path: Path) -> None:
    """The subtitle cache is keyed like the video probes (path, size, mtime), not by path alone."""
    subs = tmp_path / "subs"
    subs.mkdir()
    srt = subs / "gop_en.srt"
    srt.write_text(_SRT)
    sampler = FrameSampler(FramesConfig(longest_side=WIDTH, jpeg_quality=95, cache_dir=tmp_path / "cache"))
    source = LocalVideos(sampler, gop_video.parent, subs)
    asked = _clip_question(None, None, subtitle_path="gop_en.srt", subtitle_offset=10.0)
    assert await source.lines_between(asked, 5.0, 6.0) == ("[5.2s] clip line",)
    replaced = _SRT.replace("clip line", "corrected clip line")
    srt.write_text(replaced)
    os.utime(srt, ns=(srt.stat().st_atime_ns, srt.stat().st_mtime_ns + 1_000_000_000))
    assert await source.lines_between(asked, 5.0, 6.0) == ("[5.2s] corrected clip line",)


class _Steps:
    def __init__(self) -> None:
        self.steps: list[TraceStep] = []
        self.predictions: list[Prediction] = []

    async def write_step(self, step: TraceStep) -> None:
        self.steps.append(step)

    async def write_prediction(self, prediction: Prediction) -> None:
        self.predictions.append(prediction)


_CLIPPED = _clip_question(4.0, 6.0).model_copy(
    update={"task_type": "Counting Problem", "question_id": "clip"}
)


@pytest.mark.sim_world(SimConfig(seed=3, agent=SimAgentConfig(extra_frames_rate=1.0)), questions=[_CLIPPED])
async def test_the_agent_loop_asks_about_the_clip_only(
    gop_video: Path, tmp_path: Path, sim: SimServer, default_bundle: Bundle
) -> None:
    sampler = FrameSampler(FramesConfig(longest_side=WIDTH, cache_dir=tmp_path / "cache"))
    source = LocalVideos(sampler, gop_video.parent)
    llm = LLMConfig(model=sim.model_name, endpoints=(EndpointConfig(base_url=sim.base_url),))
    sink = _Steps()
    async with build_chat_model(llm, None) as stack:
        agent = Agent(stack, sim.model_name, default_bundle, source, None, AgentConfig(initial_frames=4))
        prediction = await agent.answer(_CLIPPED, run_id="clip", sample_idx=0, sink=sink)
    assert prediction.status is PredictionStatus.OK, prediction.error_message
    assert "Video duration: 2.0s." in sink.steps[0].content
    shown = [t for step in sink.steps for t in step.frames_shown]
    tool_frames = [t for step in sink.steps[1:] for t in step.frames_shown]
    assert tool_frames, "the simulated agent asked for more frames"
    assert all(0.0 <= t <= 2.0 for t in shown), shown


def test_a_window_open_to_the_end_is_sampled_and_cached(gop_video: Path, tmp_path: Path) -> None:
    # The frame-cache key once rounded the end to whole microseconds: infinity raised OverflowError.
    args = ["frames", str(gop_video), "--count", "2", "--clip-start", "8", "--clip-end", "inf"]
    cache = ["--cache-dir", str(tmp_path / "cache")]
    for run in range(2):  # the second run reads the frames the first one cached
        result = CliRunner().invoke(
            command_app(frames_command.register), [*args, *cache, "--out", str(tmp_path / f"out{run}")]
        )
        assert result.exit_code == 0, result.output
        assert "duration 2.000 s (clip [8s, infs] of the file" in result.output
    first = sorted(p.read_bytes() for p in (tmp_path / "out0").iterdir())
    assert first == sorted(p.read_bytes() for p in (tmp_path / "out1").iterdir())


def test_a_window_shorter_than_a_microsecond_names_the_window_and_the_file(
    gop_video: Path, sampler: FrameSampler
) -> None:
    for window in (Window(0.0, 1e-9), Window(9.9999999, 12.0)):
        with pytest.raises(DataError, match="is shorter than a microsecond: no frame lies in it") as info:
            sampler.uniform(gop_video, 2, window)
        assert str(gop_video) in str(info.value)
