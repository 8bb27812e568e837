"""Inputs a demanding user feeds the data layer: each gets a DataError or SplitError naming the file,
row, field or flag at fault (never a traceback), and nothing is silently misread."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from cli_support import command_app, run_cli
from skillharness.commands import data as data_cmd
from skillharness.commands import split as split_cmd
from skillharness.data import Adapter, load_adapter, load_benchmark
from skillharness.data.loader import REQUIRED_COLUMNS
from skillharness.data.pools import verify_split, write_split
from skillharness.data.questions import Question
from skillharness.data.split import SplitParams, make_split
from skillharness.errors import DataError, SplitError

_DEEP = "[" * (sys.getrecursionlimit() * 20)  # far past the interpreter's stack


def _row(i: int, **changes: Any) -> dict[str, Any]:
    """One Video-MME row: video ``i``, one question."""
    row = {
        "video_id": f"{i:03d}",
        "duration": "short",
        "domain": "",
        "sub_category": "",
        "url": "",
        "videoID": f"yt{i:03d}",
        "question_id": f"{i:03d}-1",
        "task_type": "Counting Problem",
        "question": "How many?",
        "options": ["A. 1", "B. 2", "C. 3", "D. 4"],
        "answer": "B",
    }
    return {**row, **changes}


def _clip_adapter() -> Adapter:
    return Adapter.model_validate(
        {
            "name": "probe",
            "format": "json",
            "video_id": "vid",
            "question_id": "qid",
            "question": "q",
            "task_type": {"constant": "Any"},
            "options": {"form": "columns", "columns": ["a0", "a1", "a2"]},
            "answer": {"field": "ans", "form": "index0"},
            "clip": {"start": "s", "end": "e"},
        }
    )


@pytest.mark.parametrize("name", ["q.json", "q.jsonl"])
def test_json_nested_too_deeply_is_a_data_error_naming_the_file(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_text(_DEEP + "\n")
    with pytest.raises(DataError, match="not valid JSON: nested too deeply") as info:
        load_benchmark(path, load_adapter("videomme"))
    assert str(path) in str(info.value)


def test_a_deeply_nested_options_cell_is_a_row_problem(tmp_path: Path) -> None:
    path = tmp_path / "q.csv"
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(REQUIRED_COLUMNS))
        writer.writeheader()
        writer.writerow({**_row(1), "options": _DEEP})
    with pytest.raises(DataError, match=r"row 1 \(question_id 001-1\): field 'options': not a list"):
        load_benchmark(path, load_adapter("videomme"))


def test_a_deeply_nested_answers_file_is_a_data_error(tmp_path: Path) -> None:
    (tmp_path / "questions.json").write_text(
        json.dumps([{"q_uid": "u1", "question": "?", **{f"option {k}": f"o{k}" for k in range(5)}}])
    )
    (tmp_path / "subset_answers.json").write_text(_DEEP)
    with pytest.raises(DataError, match=r"subset_answers\.json: not valid JSON: nested too deeply"):
        load_benchmark(tmp_path / "questions.json", load_adapter("egoschema"))


def test_the_cli_exits_2_without_a_traceback_on_deep_json(tmp_path: Path) -> None:
    path = tmp_path / "q.json"
    path.write_text(_DEEP)
    result = run_cli("data", "check", str(path))
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert "nested too deeply" in result.stderr


def test_a_csv_header_naming_a_column_twice_is_refused(tmp_path: Path) -> None:
    # csv.DictReader keeps the last "answer": the first column's answers would vanish unseen.
    path = tmp_path / "q.csv"
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow([*REQUIRED_COLUMNS, "answer"])
        writer.writerow([*(json.dumps(v) if k == "options" else v for k, v in _row(1).items()), "D"])
    with pytest.raises(DataError, match=r"q.csv: line 1 \(the header\): column\(s\) 'answer' named more"):
        load_benchmark(path, load_adapter("videomme"))


def test_unnamed_trailing_csv_columns_still_load(tmp_path: Path) -> None:
    path = tmp_path / "q.tsv"
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle, delimiter="\t")
        writer.writerow([*REQUIRED_COLUMNS, "", ""])  # a spreadsheet's trailing empty columns
        writer.writerow([*(json.dumps(v) if k == "options" else v for k, v in _row(1).items()), "", ""])
    assert [q.answer for q in load_benchmark(path, load_adapter("videomme")).questions] == ["B"]


def test_nan_cells_are_empty_not_the_text_nan(tmp_path: Path) -> None:
    # json.dump of a pandas DataFrame's records writes NaN for an empty cell.
    rows = [
        {"vid": "v1", "qid": "1", "q": "?", "a0": "x", "a1": "y", "a2": float("nan"), "ans": 1,
         "s": float("nan"), "e": float("nan")},
        {"vid": "v2", "qid": "2", "q": "?", "a0": "x", "a1": "y", "a2": "z", "ans": 2, "s": 1.0, "e": 4.0},
    ]  # fmt: skip
    path = tmp_path / "q.json"
    path.write_text(json.dumps(rows))
    first, second = load_benchmark(path, _clip_adapter()).questions
    assert (first.clip_start, first.clip_end) == (None, None), "about the whole video"
    assert first.options == ("A. x", "B. y"), "a NaN option column is no option"
    assert (second.clip_start, second.clip_end) == (1.0, 4.0)


def test_an_infinite_clip_end_is_refused_naming_the_row(tmp_path: Path) -> None:
    """``inf`` parses as a float: a window to infinity names no frame, no subtitle cue, no cache key."""
    rows = [
        {"vid": "v1", "qid": "1", "q": "?", "a0": "x", "a1": "y", "a2": "z", "ans": 1, "s": 1.0, "e": "inf"}
    ]
    path = tmp_path / "q.json"
    path.write_text(json.dumps(rows))
    with pytest.raises(DataError, match=r"question_id 1.*both ends finite seconds"):
        load_benchmark(path, _clip_adapter())
    with pytest.raises(ValueError, match="ends must be finite seconds"):  # the model, whatever the reader
        Question.model_validate({**_row(1), "clip_start": 0.0, "clip_end": float("inf")})


def test_a_nan_answer_or_id_is_named_as_missing(tmp_path: Path) -> None:
    rows = [
        {"vid": "v1", "qid": "1", "q": "?", "a0": "x", "a1": "y", "a2": "z", "ans": float("nan")},
        {"vid": float("nan"), "qid": "2", "q": "?", "a0": "x", "a1": "y", "a2": "z", "ans": 0},
    ]
    path = tmp_path / "q.json"
    path.write_text(json.dumps(rows))
    with pytest.raises(DataError) as info:
        load_benchmark(path, _clip_adapter())
    problems = info.value.context["problems"]
    assert any("row 1 (question_id 1): field 'answer': no answer: the answer is NaN" in p for p in problems)
    assert any("row 2 (question_id 2): field 'video_id'" in p for p in problems), problems


def test_a_blank_question_id_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "q.json"
    path.write_text(json.dumps([_row(1), _row(2, question_id="   ")]))
    with pytest.raises(DataError, match=r"row 2 .*field 'question_id': .*is blank"):
        load_benchmark(path, load_adapter("videomme"))


def test_a_folder_given_as_adapter_or_answers_file_is_named_a_folder(tmp_path: Path) -> None:
    (tmp_path / "mine.yaml").mkdir()
    with pytest.raises(DataError, match=r"mine\.yaml is a folder"):
        load_adapter(tmp_path / "mine.yaml")
    (tmp_path / "questions.json").write_text(
        json.dumps([{"q_uid": "u1", "question": "?", **{f"option {k}": f"o{k}" for k in range(5)}}])
    )
    (tmp_path / "subset_answers.json").mkdir()
    with pytest.raises(DataError, match=r"subset_answers\.json is a folder, not a file"):
        load_benchmark(tmp_path / "questions.json", load_adapter("egoschema"))


def test_data_check_names_clip_fields_no_row_has(tmp_path: Path) -> None:
    adapter = tmp_path / "mine.yaml"
    adapter.write_text(
        "format: jsonl\nvideo_id: clip\nquestion: prompt\ntask_type: {constant: Gesture}\n"
        "options: {form: list, field: choices}\nanswer: {field: gold, form: index1}\n"
        "clip: {start: start, end: stop}\n"  # the file says t0 and t1
    )
    rows = tmp_path / "q.jsonl"
    row = {"clip": "v", "prompt": "?", "choices": ["a", "b"], "gold": 1, "t0": 1, "t1": 3}
    rows.write_text(json.dumps(row))
    result = CliRunner().invoke(
        command_app(data_cmd.register), ["data", "check", "--benchmark", str(adapter), str(rows)]
    )
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert "fields the adapter names that no row has (misspelt?):" in lines
    assert "  clip.start: start" in lines
    assert "  clip.end: stop" in lines


def test_data_synth_with_an_adapter_file_prints_a_check_command_that_runs(tmp_path: Path) -> None:
    adapter = tmp_path / "mine.yaml"
    adapter.write_text(
        "format: jsonl\nvideo_id: clip\nquestion_id: qid\nquestion: prompt\n"
        "task_type: {constant: Gesture}\noptions: {form: list, field: choices}\n"
        "answer: {field: gold, form: index1}\n"
    )
    app = command_app(data_cmd.register)
    result = CliRunner().invoke(
        app, ["data", "synth", "--out", str(tmp_path / "s"), "--videos", "1", "--layout", str(adapter)]
    )
    assert result.exit_code == 0, result.output
    check = next(line for line in result.output.splitlines() if "check:" in line)
    args = check.split("skillharness ", 1)[1].split()
    assert args[:3] == ["data", "check", "--benchmark"]
    assert args[3] == str(adapter.resolve())
    assert CliRunner().invoke(app, args).exit_code == 0, "the printed command reads what synth wrote"


def _videos(tmp_path: Path, n: int = 9) -> Path:
    path = tmp_path / "q.json"
    path.write_text(json.dumps([_row(i) for i in range(n)]))
    return path


def _split(*args: str) -> Any:
    return CliRunner().invoke(command_app(split_cmd.register), ["split", *args])


def test_sizes_past_a_sample_name_both_flags(tmp_path: Path) -> None:
    result = _split("--questions", str(_videos(tmp_path)), "--out", str(tmp_path / "o"),
                    "--sizes", "3,3,3", "--sample", "5")  # fmt: skip
    assert isinstance(result.exception, SplitError)
    assert str(result.exception) == "--sizes 3,3,3 needs 9 video units, but --sample 5 draws only 5"


def _frozen(tmp_path: Path) -> Path:
    out = tmp_path / "split"
    result = _split("--questions", str(_videos(tmp_path)), "--out", str(out), "--sizes", "3,3,3")
    assert result.exit_code == 0, result.output
    assert verify_split(out) == []
    return out


def test_verify_describes_a_hand_edited_pools_file(tmp_path: Path) -> None:
    out = _frozen(tmp_path)
    doc = json.loads((out / "pools.json").read_text())
    doc["pools"]["val"]["question_ids"].append(doc["pools"]["test"]["question_ids"][0])
    (out / "pools.json").write_text(json.dumps(doc))
    problems = verify_split(out)
    assert "does not match the expected" in problems[0]
    assert "is in both val and test" in problems[1], problems


def test_verify_after_a_question_moved_pools_names_sizes_by_pool(tmp_path: Path) -> None:
    out = _frozen(tmp_path)
    doc = json.loads((out / "pools.json").read_text())
    doc["pools"]["val"]["question_ids"].append(doc["pools"]["test"]["question_ids"].pop())
    (out / "pools.json").write_text(json.dumps(doc))
    problems = verify_split(out)
    assert len(problems) == 3, problems  # the sha256, the sizes, the counts
    assert "{'train': {'units': 3, 'questions': 3}, 'val': {'units': 3, 'questions': 4}" in problems[1]
    assert "Pool." not in problems[1]


@pytest.mark.parametrize(
    ("edit", "needle"),
    [
        ({"benchmark": "nope"}, "split_manifest.json: source.benchmark 'nope': unknown benchmark 'nope'"),
        (
            {"path": 7},
            "split_manifest.json: unreadable manifest: key 'source.path' is an int, expected a str",
        ),
    ],
)
def test_verify_names_the_manifest_key_at_fault(tmp_path: Path, edit: dict[str, Any], needle: str) -> None:
    out = _frozen(tmp_path)
    manifest = json.loads((out / "split_manifest.json").read_text())
    manifest["source"].update(edit)
    (out / "split_manifest.json").write_text(json.dumps(manifest))
    problems = verify_split(out)
    assert len(problems) == 1, problems
    assert needle in problems[0]


def test_verify_of_a_file_says_to_give_the_folder(tmp_path: Path) -> None:
    out = _frozen(tmp_path)
    assert verify_split(out / "pools.json") == [
        f"{out / 'pools.json'} is a file; give the folder holding pools.json and split_manifest.json"
    ]


def test_a_folder_where_pools_json_goes_is_refused_as_an_artifact(tmp_path: Path) -> None:
    out = tmp_path / "split"
    (out / "pools.json").mkdir(parents=True)
    result = _split("--questions", str(_videos(tmp_path)), "--out", str(out), "--sizes", "3,3,3")
    assert isinstance(result.exception, SplitError), result.exception
    assert "split artifacts already exist" in str(result.exception)
    assert "pools.json (a folder)" in str(result.exception)
    assert (out / "pools.json").is_dir(), "nothing replaced without --force"


def test_a_list_or_object_where_an_id_goes_is_named_not_turned_into_text(tmp_path: Path) -> None:
    """str(["a"]) would make an id "['a']" that names no video and nothing the user wrote."""
    path = tmp_path / "q.json"
    path.write_text(json.dumps([_row(1, question_id=["a"]), _row(2, video_id={"id": 2}), _row(3)]))
    with pytest.raises(DataError) as info:
        load_benchmark(path, load_adapter("videomme"))
    message = str(info.value)
    assert "field 'question_id': a list, where one value is expected" in message
    assert "field 'video_id': a dict, where one value is expected" in message
    assert "'['a']'" not in message


SPLIT_UNDER_A_LIMIT = """
import resource, signal, sys
from pathlib import Path
from skillharness.data import load_adapter, load_benchmark
from skillharness.data.pools import write_split
from skillharness.data.split import SplitParams, make_split
source, out, limit = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
questions = load_benchmark(source, load_adapter("videomme")).questions
split = make_split(questions, SplitParams(sizes=(4, 4, 4), unit="video"))
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG, as a full disk's
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
try:
    write_split(split, list(questions), source, out, force=False, version="t")
except OSError as exc:
    print(exc.filename)
    sys.exit(3)
"""


def test_a_split_whose_manifest_write_fails_leaves_no_pools_file_behind(tmp_path: Path) -> None:
    """pools.json without its manifest is refused as "manifest missing" and needs --force to redo:
    the two are written all or none."""
    source = tmp_path / "q.json"
    source.write_text(json.dumps([_row(i) for i in range(1, 13)]))
    questions = load_benchmark(source, load_adapter("videomme")).questions
    sizes = write_split(
        make_split(questions, SplitParams(sizes=(4, 4, 4), unit="video")), list(questions), source,
        tmp_path / "scratch", force=False, version="t",
    )  # fmt: skip
    pools, manifest = sizes.pools_path.stat().st_size, sizes.manifest_path.stat().st_size
    assert pools < manifest, "the limit below lets pools.json through and stops the manifest"
    out = tmp_path / "split"
    args = [sys.executable, "-c", SPLIT_UNDER_A_LIMIT, str(source), str(out), str((pools + manifest) // 2)]
    done = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert done.returncode == 3, done.stderr
    assert done.stdout.strip() == str(out / "split_manifest.json")
    assert not list(out.iterdir()), "neither file, and no temp file"


def test_a_csv_row_shorter_than_its_header_is_named_as_one(tmp_path: Path) -> None:
    path = tmp_path / "q.csv"
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(REQUIRED_COLUMNS)
        writer.writerow([*(json.dumps(v) if k == "options" else v for k, v in _row(1).items())])
        writer.writerow([v for k, v in _row(2).items() if k not in ("options", "answer")])  # cut short
    with pytest.raises(DataError, match=r"row 2 .*field 'options': no value \(an empty cell, or a row with"):
        load_benchmark(path, load_adapter("videomme"))
