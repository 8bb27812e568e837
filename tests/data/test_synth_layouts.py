"""``data synth --layout``: the synthetic benchmark in each built-in layout loads back through its
adapter to the questions the generator wrote (ids, answer letters, task types, clip windows)."""

from __future__ import annotations

import json
from pathlib import Path

import av
import pytest
from typer.testing import CliRunner

from cli_support import command_app
from skillharness.commands import data
from skillharness.data import builtin_adapters, generate_benchmark, load_adapter, load_benchmark
from skillharness.data.synth_layout import layout_shape, questions_path

_LAYOUTS = sorted(name for name in builtin_adapters() if name != "videomme")


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("layouts")
    return {
        name: generate_benchmark(root / name, videos=6, seed=2, layout=name, workers=1) for name in _LAYOUTS
    }


@pytest.mark.parametrize("layout", _LAYOUTS)
def test_each_layout_loads_back_to_the_questions_written(written: dict[str, Path], layout: str) -> None:
    folder, adapter = written[layout], load_adapter(layout)
    truth = json.loads((folder / "truth.json").read_text())
    loaded = load_benchmark(questions_path(folder, adapter), adapter)
    assert not loaded.dropped
    assert sorted(q.question_id for q in loaded.questions) == sorted(truth)
    shape = layout_shape(adapter)
    assert len(loaded.questions) == 6 * shape.per_video
    for q in loaded.questions:
        fact = truth[q.question_id]
        assert (q.answer, q.task_type, len(q.options)) == (fact["answer"], fact["task_type"], shape.options)
        assert q.option_text(q.answer) == fact["answer_text"]
        clip = [q.clip_start, q.clip_end] if q.clip_start is not None else None
        assert clip == fact["clip_s"]
    if adapter.task_types:  # a fixed vocabulary: the questions use it, spread over its names
        assert {q.task_type for q in loaded.questions} <= set(adapter.task_types)
        assert len({q.task_type for q in loaded.questions}) == min(
            len(adapter.task_types), len(loaded.questions)
        )


def test_mvbench_windows_sit_inside_longer_videos(written: dict[str, Path]) -> None:
    adapter = load_adapter("mvbench")
    loaded = load_benchmark(questions_path(written["mvbench"], adapter), adapter)
    clipped = [q for q in loaded.questions if q.clip_start is not None]
    assert clipped  # some windows
    assert len(clipped) < len(loaded.questions)  # and some whole videos
    for q in clipped:
        with av.open(str(written["mvbench"] / "videos" / f"{q.videoID}.mp4")) as video:
            length = float(video.duration) / av.time_base
        assert q.clip_start > 0
        assert q.clip_end < length


def test_subtitle_layouts_write_their_own_files(written: dict[str, Path]) -> None:
    lvb = load_benchmark(
        questions_path(written["longvideobench"], load_adapter("longvideobench")),
        load_adapter("longvideobench"),
    )
    with_subtitles = [q for q in lvb.questions if q.subtitle_path]
    assert with_subtitles
    assert {q.subtitle_offset for q in with_subtitles} == {0.0, 30.0}
    assert all((written["longvideobench"] / "subtitles" / q.subtitle_path).is_file() for q in with_subtitles)
    assert list((written["videomme_v2"] / "subtitles" / "subtitle").glob("*.jsonl"))
    assert not list((written["videomme_v2"] / "subtitles").glob("*.srt"))


def test_data_synth_layout_prints_the_check_command_and_the_default_is_unchanged(tmp_path: Path) -> None:
    app = command_app(data.register)
    result = CliRunner().invoke(
        app, ["data", "synth", "--out", str(tmp_path / "ego"), "--videos", "3", "--layout", "egoschema"]
    )
    assert result.exit_code == 0, result.output
    assert "wrote 3 videos and 3 questions" in result.output
    assert (
        f"skillharness data check --benchmark egoschema {tmp_path / 'ego' / 'questions.json'}"
        in result.output
    )
    assert (tmp_path / "ego" / "subset_answers.json").is_file()
    plain = CliRunner().invoke(app, ["data", "synth", "--out", str(tmp_path / "mme"), "--videos", "3"])
    assert plain.exit_code == 0, plain.output
    assert "wrote 3 videos and 9 questions" in plain.output
    assert "data check" not in plain.output
    assert sorted(p.name for p in (tmp_path / "mme").iterdir()) == [
        "manifest.json", "questions.json", "scenes.json", "subtitles", "truth.json", "videos",
    ]  # fmt: skip
    assert "benchmark" not in json.loads((tmp_path / "mme" / "manifest.json").read_text())
