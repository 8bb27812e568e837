"""``skillharness data check``: a file read through an adapter, summarized in 80 columns."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli_support import command_app, run_cli
from skillharness.commands.data import register

APP = command_app(register)


def _mvbench(root: Path) -> Path:
    folder = root / "json"
    folder.mkdir()
    long_name = "a_task_name_long_enough_to_be_cut_at_eighty_columns_" * 2
    for stem, rows in {
        "action_sequence": [
            {
                "video": "v1.mp4",
                "question": "First?",
                "candidates": ["a", "b", "c", "d"],
                "answer": "b",
                "start": 2.0,
                "end": 9.5,
            },
            {
                "video": "v2.mp4",
                "question": "Then?",
                "candidates": ["a", "b", "c"],
                "answer": "a",
                "start": 0,
                "end": 30,
            },
        ],
        "scene_transition": [
            {"video": "v3.mp4", "question": "Where?", "candidates": ["x", "y"], "answer": "y"}
        ],
    }.items():
        (folder / f"{stem}.json").write_text(json.dumps(rows))
    (folder.parent / "mine.yaml").write_text(
        "format: folder\nvideo_id: video\nquestion: question\ntask_type: {file_stem: true}\n"
        f"task_names: {{action_sequence: {long_name}}}\n"
        "options: {form: list, field: candidates}\nanswer: {field: answer, form: text}\n"
    )
    return folder


def test_check_prints_task_types_option_counts_and_clip_windows(tmp_path: Path) -> None:
    folder = _mvbench(tmp_path)
    result = CliRunner().invoke(APP, ["data", "check", "--benchmark", "mvbench", str(folder)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "3 questions in 3 videos, adapter 'mvbench'"
    assert any(line.split() == ["Action", "Sequence", "2"] for line in lines)
    assert any(line.split() == ["Scene", "Transition", "1"] for line in lines)
    assert "(18 task type(s) of the benchmark have no question here)" in lines
    assert [line.split() for line in lines if len(line.split()) == 2 and line.split()[0].isdigit()] == [
        ["2", "1"],
        ["3", "1"],
        ["4", "1"],
    ], "one question each with 2, 3 and 4 options"
    assert "clip windows: 2 of 3 question(s), 7.5-30.0 s long" in lines
    assert all(len(line) <= 80 for line in lines)


def test_check_with_a_users_adapter_file_cuts_long_names_to_80_columns(tmp_path: Path) -> None:
    folder = _mvbench(tmp_path)
    args = ["data", "check", "--benchmark", str(tmp_path / "mine.yaml"), str(folder)]
    result = CliRunner().invoke(APP, args)
    assert result.exit_code == 0, result.output
    assert "adapter 'mine'" in result.output
    assert "clip windows: none" in result.output, "this adapter reads no clip fields"
    lines = result.output.splitlines()
    assert any(line.startswith("a_task_name_long") and line.endswith("…          2") for line in lines)
    assert all(len(line) <= 80 for line in result.output.splitlines())


@pytest.mark.slow
def test_check_of_the_wrong_layout_exits_2_with_the_fields(tmp_path: Path) -> None:
    folder = _mvbench(tmp_path)
    result = run_cli("data", "check", "--benchmark", "nextqa", str(folder / "action_sequence.json"))
    assert result.returncode == 2
    assert "does not fit adapter 'nextqa'" in result.stderr
    assert "missing: type, qid, a0, a1, a2, a3, a4" in result.stderr
    assert result.stdout == ""
