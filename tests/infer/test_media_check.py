"""The start-up media check: what it reads, and that the run reuses what it read."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bench_support import Bench
from skillharness.data.config import DataConfig
from skillharness.data.loader import load_questions
from skillharness.errors import DataError
from skillharness.infer.runner import check_media
from skillharness.video import decoder_stats, video_duration


def _copy(bench: Bench, tmp_path: Path) -> DataConfig:
    shutil.copytree(bench.root / "videos", tmp_path / "videos")
    shutil.copytree(bench.root / "subtitles", tmp_path / "subtitles")
    return DataConfig(
        questions=bench.questions, videos_dir=tmp_path / "videos", subtitles_dir=tmp_path / "subtitles"
    )


def test_subtitles_are_checked_only_when_the_agent_reads_them(bench: Bench, tmp_path: Path) -> None:
    data = _copy(bench, tmp_path)
    questions = load_questions(bench.questions)
    victim = sorted((tmp_path / "subtitles").glob("*.srt"))[0]
    victim.write_text("1\nthis is not a timing line\nhello\n")
    check_media(data, questions, subtitles=False)  # a text-only agent never opens it
    with pytest.raises(DataError, match="subtitle file\\(s\\) do not parse") as caught:
        check_media(data, questions, subtitles=True)
    assert victim.name in str(caught.value)


def test_a_mistyped_subtitles_folder_is_refused_not_run_without_subtitles(
    bench: Bench, tmp_path: Path
) -> None:
    data = _copy(bench, tmp_path)
    questions = load_questions(bench.questions)
    typo = data.model_copy(update={"subtitles_dir": tmp_path / "subtitels"})
    with pytest.raises(
        DataError, match=r"subtitels: not a folder; fix data\.subtitles_dir, or set agent\.subtitles"
    ):
        check_media(typo, questions, subtitles=True)
    check_media(typo, questions, subtitles=False)  # an agent that reads none never looks
    wrong = data.model_copy(update={"subtitles_dir": tmp_path / "videos"})  # a folder, of other files
    with pytest.raises(DataError, match=r"holds a subtitle file for none of the \d+ question\(s\) asked"):
        check_media(wrong, questions, subtitles=True)
    # One video without subtitles is normal: the rest still have theirs.
    sorted((tmp_path / "subtitles").glob("*.srt"))[0].unlink()
    check_media(data, questions, subtitles=True)


def test_the_subtitle_file_a_question_names_is_the_one_checked(bench: Bench, tmp_path: Path) -> None:
    """LongVideoBench-style rows name their own subtitle file: that file, not <videoID>.srt, is
    the one the agent reads, so it is the one parsed before anything is asked."""
    data = _copy(bench, tmp_path)
    questions = load_questions(bench.questions)
    (tmp_path / "subtitles" / "own.srt").write_text("1\nthis is not a timing line\nhello\n")
    named = [questions[0].model_copy(update={"subtitle_path": "own.srt"}), *questions[1:]]
    check_media(data, questions, subtitles=True)
    with pytest.raises(DataError, match="1 subtitle file\\(s\\) do not parse") as caught:
        check_media(data, named, subtitles=True)
    assert "own.srt" in str(caught.value)


def test_every_bad_video_is_named(bench: Bench, tmp_path: Path) -> None:
    data = _copy(bench, tmp_path)
    questions = load_questions(bench.questions)
    videos = sorted((tmp_path / "videos").glob("*.mp4"))
    for victim in videos[:3]:
        victim.write_bytes(b"")
    with pytest.raises(DataError, match="3 video file\\(s\\) cannot be read") as caught:
        check_media(data, questions, subtitles=False)
    for victim in videos[:3]:
        assert victim.name in str(caught.value)


def test_a_video_header_is_read_once_per_file_identity(bench: Bench, tmp_path: Path) -> None:
    _copy(bench, tmp_path)
    video = sorted((tmp_path / "videos").glob("*.mp4"))[0]
    before = decoder_stats().opens
    first = video_duration(video)
    assert video_duration(video) == first
    assert decoder_stats().opens == before + 1  # the run's questions find what start-up read
    other = sorted((tmp_path / "videos").glob("*.mp4"))[1]
    shutil.copyfile(other, video)  # replaced: a new size or mtime, so it is read again
    assert video_duration(video) == video_duration(other)
    assert decoder_stats().opens == before + 3


def test_a_clip_window_past_its_videos_end_is_named(bench: Bench, tmp_path: Path) -> None:
    data = _copy(bench, tmp_path)
    questions = load_questions(bench.questions)
    duration = video_duration(sorted((tmp_path / "videos").glob(f"{questions[0].videoID}.*"))[0])
    inside = questions[0].model_copy(update={"clip_start": 0.0, "clip_end": duration / 2})
    past = questions[1].model_copy(update={"clip_start": 10_000.0, "clip_end": 10_010.0})
    check_media(data, [inside, *questions[2:]], subtitles=False)
    with pytest.raises(DataError, match="1 question\\(s\\) have a clip window past") as caught:
        check_media(data, [inside, past], subtitles=False)
    assert past.question_id in str(caught.value)
    assert inside.question_id not in str(caught.value)


def test_a_folder_of_frames_is_refused_before_the_run_with_its_task(bench: Bench, tmp_path: Path) -> None:
    data = _copy(bench, tmp_path)
    (tmp_path / "videos" / "s08e22_seg02_clip_07").mkdir()
    question = load_questions(bench.questions)[0].model_copy(
        update={"videoID": "s08e22_seg02_clip_07", "task_type": "Episodic Reasoning"}
    )
    with pytest.raises(DataError, match="folder of frame images") as caught:
        check_media(data, [question], subtitles=False)
    assert "'Episodic Reasoning'" in str(caught.value)
