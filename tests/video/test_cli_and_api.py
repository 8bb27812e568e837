"""The `data synth` and `frames` commands, end to end, and the video layer's public surface."""

from __future__ import annotations

from pathlib import Path

import pytest

import skillharness.video
from cli_support import run_cli as _cli


def test_public_surface_is_pinned() -> None:
    assert skillharness.video.__all__ == sorted(skillharness.video.__all__)
    assert set(skillharness.video.__all__) == {
        "DecodePool",
        "DecoderStats",
        "Frame",
        "FrameCache",
        "FrameLayout",
        "FrameSampler",
        "FrameSet",
        "FramesConfig",
        "SubtitleLine",
        "Subtitles",
        "Window",
        "decoder_stats",
        "default_cache_dir",
        "frame_layout",
        "frames_by_index",
        "load_subtitles",
        "locate_subtitles",
        "locate_video",
        "question_subtitles",
        "range_timestamps",
        "uniform_timestamps",
        "usable_cores",
        "video_duration",
        "whole_video_duration",
        "window_span",
    }


@pytest.mark.slow
def test_new_user_can_synth_then_look_at_frames(tmp_path: Path) -> None:
    made = _cli("data", "synth", "--out", "bench", "--videos", "3", "--seed", "4", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    assert "wrote 3 videos and 9 questions" in made.stdout
    video = tmp_path / "bench" / "videos" / "syn4-002.mp4"
    shown = _cli("frames", str(video), "--count", "4", "--out", "frames", "--cache-dir", "fc", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    jpegs = sorted((tmp_path / "frames").glob("*.jpg"))
    assert len(jpegs) == 4
    assert all(p.read_bytes().startswith(b"\xff\xd8") for p in jpegs)
    duration = skillharness.video.video_duration(video)
    for t in skillharness.video.uniform_timestamps(duration, 4):
        assert f"{t:10.3f} s" in shown.stdout
    ranged = _cli(
        "frames",
        str(video),
        "--count",
        "2",
        "--start",
        "1",
        "--end",
        "3",
        "--out",
        "r",
        "--no-cache",
        cwd=tmp_path,
    )
    assert ranged.returncode == 0, ranged.stderr
    assert "     1.500 s" in ranged.stdout
    assert "     2.500 s" in ranged.stdout


@pytest.mark.slow
def test_cli_user_errors_exit_2_with_one_clear_message(tmp_path: Path) -> None:
    missing = _cli("frames", "nope.mp4", "--count", "2", "--out", "f", "--no-cache", cwd=tmp_path)
    assert missing.returncode == 2
    assert "error: video file not found: nope.mp4" in missing.stderr
    assert "Traceback" not in missing.stderr
    half = _cli("frames", "nope.mp4", "--start", "1", "--out", "f", cwd=tmp_path)
    assert half.returncode == 2
    assert "--start and --end go together" in half.stderr
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("keep me")
    refused = _cli("data", "synth", "--out", "full", "--videos", "1", cwd=tmp_path)
    assert refused.returncode == 2
    assert "--force" in refused.stderr
    assert (tmp_path / "full" / "x").read_text() == "keep me"
