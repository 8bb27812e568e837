"""The questions loader: every format, and every malformed row named in the error."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from skillharness.data.loader import REQUIRED_COLUMNS, load_questions
from skillharness.data.questions import Benchmark, TaskType
from skillharness.errors import DataError


def row(qid: str = "001-1", **changes: Any) -> dict[str, Any]:
    base = {
        "video_id": qid.split("-")[0],
        "duration": "short",
        "domain": "Knowledge",
        "sub_category": "Humanity & History",
        "url": "https://example.invalid/v",
        "videoID": "abc",
        "question_id": qid,
        "task_type": "Counting Problem",
        "question": "How many?",
        "options": ["A. 1.", "B. 2.", "C. 3.", "D. 4."],
        "answer": "C",
    }
    base.update(changes)
    if "videoID" not in changes:  # one file per video, as the loader requires
        base["videoID"] = f"yt{base['video_id']}"
    return base


def write_json(tmp_path: Path, rows: list[dict[str, Any]], name: str = "q.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(rows))
    return path


def write_table(path: Path, rows: list[dict[str, Any]]) -> Path:
    suffix = path.suffix
    if suffix == ".jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    elif suffix in (".csv", ".tsv"):
        with path.open("w", newline="") as handle:
            writer = csv.DictWriter(
                handle, fieldnames=list(REQUIRED_COLUMNS), delimiter="\t" if suffix == ".tsv" else ","
            )
            writer.writeheader()
            for r in rows:
                writer.writerow({**r, "options": json.dumps(r["options"])})
    elif suffix == ".parquet":
        pq.write_table(pa.Table.from_pylist(rows), path)
    else:
        path.write_text(json.dumps(rows))
    return path


@pytest.mark.parametrize("suffix", [".json", ".jsonl", ".csv", ".tsv", ".parquet"])
def test_every_format_loads_the_same_questions(tmp_path: Path, suffix: str) -> None:
    rows = [row("001-1"), row("001-2", answer="a", task_type="OCR Problems"), row("002-1", duration="long")]
    loaded = load_questions(write_table(tmp_path / f"q{suffix}", rows))
    assert [q.question_id for q in loaded] == ["001-1", "001-2", "002-1"]
    assert loaded[1].answer == "A"
    assert loaded[0].options == ("A. 1.", "B. 2.", "C. 3.", "D. 4.")
    assert loaded[2].duration == "long"


@pytest.mark.parametrize(
    ("bad", "needle"),
    [
        (row("002-1", task_type="Vibes Analysis"), "field 'task_type': unknown task type 'Vibes Analysis'"),
        (row("002-1", answer="E"), "answer 'E' is not among the option letters"),
        (row("002-1", options=["A. x", "C. y", "B. z", "D. w"]), "options[1] must start with 'B. '"),
        (row("002-1", options=["1. x", "2. y", "3. z", "4. w"]), "options[0] must start with 'A. '"),
        (row("002-1", duration="epic"), "field 'duration': 'epic' is not one of"),
        (row("002-1", options="not a list"), "field 'options'"),
        (row("002-1", question=""), "field 'question'"),
    ],
)
def test_malformed_row_is_named(tmp_path: Path, bad: dict[str, Any], needle: str) -> None:
    path = write_json(tmp_path, [row("001-1"), bad])
    with pytest.raises(DataError) as info:
        load_questions(path)
    message = str(info.value)
    assert str(path) in message
    assert "row 2 (question_id 002-1)" in message
    assert needle in message


def test_missing_column_is_named(tmp_path: Path) -> None:
    broken = row("002-1")
    del broken["answer"], broken["videoID"]
    with pytest.raises(DataError, match=r"row 2 \(question_id 002-1\): missing column\(s\) videoID, answer"):
        load_questions(write_json(tmp_path, [row("001-1"), broken]))


def test_duplicate_question_id_names_both_rows(tmp_path: Path) -> None:
    with pytest.raises(DataError, match=r"row 3: .*duplicate '001-1' \(first seen at row 1\)"):
        load_questions(write_json(tmp_path, [row("001-1"), row("001-2"), row("001-1")]))


def test_all_errors_are_collected_not_just_the_first(tmp_path: Path) -> None:
    rows = [row("001-1", answer="Z"), row("001-2", task_type="Nope"), row("001-3")]
    with pytest.raises(DataError) as info:
        load_questions(write_json(tmp_path, rows))
    assert info.value.context["problems"]
    assert len(info.value.context["problems"]) == 2
    assert "2 problem(s)" in str(info.value)


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ("{not json", "not valid JSON"),
        ('{"a": 1}', "expected a JSON list"),
        ("[1, 2]", "row 1: expected an object"),
        ("[]", "holds no questions"),
    ],
)
def test_malformed_file_is_a_clear_error(tmp_path: Path, content: str, needle: str) -> None:
    path = tmp_path / "q.json"
    path.write_text(content)
    with pytest.raises(DataError, match=needle):
        load_questions(path)


def test_missing_file_and_unknown_format(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="not found"):
        load_questions(tmp_path / "nope.json")
    odd = tmp_path / "q.xlsx"
    odd.write_text("x")
    with pytest.raises(DataError, match=r"unsupported questions format '\.xlsx'"):
        load_questions(odd)


def test_bad_jsonl_line_is_named(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps(row("001-1")) + "\n{oops\n")
    with pytest.raises(DataError, match="line 2: not valid JSON"):
        load_questions(path)


def test_other_benchmarks_bring_their_own_task_types(tmp_path: Path) -> None:
    custom = Benchmark(name="mybench", task_types=("Gesture",), durations=("clip",))
    path = write_json(tmp_path, [row("001-1", task_type="Gesture", duration="clip")])
    assert load_questions(path, custom)[0].task_type == "Gesture"
    with pytest.raises(DataError, match="unknown task type 'Gesture'"):
        load_questions(path)


def test_real_videomme_questions_load(videomme_questions_path: Path) -> None:
    questions = load_questions(videomme_questions_path)
    assert len(questions) == 2700
    assert {q.task_type for q in questions} == {t.value for t in TaskType}
    by_type: dict[str, int] = {}
    for q in questions:
        by_type[q.task_type] = by_type.get(q.task_type, 0) + 1
    # The counts published with the data (README of the questions folder).
    assert by_type["Object Reasoning"] == 454
    assert by_type["Spatial Perception"] == 54
    assert {q.duration for q in questions} == {"short", "medium", "long"}


def test_real_videomme_round_trips_through_parquet(videomme_questions_path: Path, tmp_path: Path) -> None:
    rows = json.loads(videomme_questions_path.read_text())
    path = tmp_path / "test-00000-of-00001.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)
    assert load_questions(path) == load_questions(videomme_questions_path)


def test_more_options_than_letters_is_a_named_row_error(tmp_path: Path) -> None:
    eleven = row("002-1", options=[f"{chr(65 + i)}. {i}" for i in range(11)])
    rows = [row("001-1"), eleven, row("003-1", answer="Z")]
    with pytest.raises(DataError) as info:
        load_questions(write_json(tmp_path, rows))
    message = str(info.value)
    assert (
        "row 2 (question_id 002-1): field 'row': Value error, at most 10 options (lettered A-J), got 11"
        in message
    )
    assert "row 3" in message, "the other rows are still checked: every problem is collected"


@pytest.mark.parametrize("suffix", [".json", ".jsonl", ".csv", ".tsv"])
def test_utf8_byte_order_mark_is_accepted(tmp_path: Path, suffix: str) -> None:
    path = write_table(tmp_path / f"q{suffix}", [row("001-1"), row("001-2")])
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())  # as spreadsheet exports write it
    assert [q.question_id for q in load_questions(path)] == ["001-1", "001-2"]


def test_answer_is_trimmed_and_upper_cased_before_it_is_checked(tmp_path: Path) -> None:
    loaded = load_questions(write_json(tmp_path, [row("001-1", answer=" c "), row("001-2", answer="b\n")]))
    assert [q.answer for q in loaded] == ["C", "B"]


def test_every_fault_of_one_row_is_reported(tmp_path: Path) -> None:
    bad = row("002-1", answer="Z", task_type="Vibes Analysis", duration="epic")
    with pytest.raises(DataError) as info:
        load_questions(write_json(tmp_path, [row("001-1"), bad]))
    problems = info.value.context["problems"]
    assert len(problems) == 3, problems
    assert any("answer 'Z'" in p for p in problems)
    assert any("unknown task type 'Vibes Analysis'" in p for p in problems)
    assert any("'epic' is not one of" in p for p in problems)


@pytest.mark.parametrize("suffix", [".jsonl", ".csv", ".tsv"])
def test_a_file_that_is_not_utf8_is_a_data_error(tmp_path: Path, suffix: str) -> None:
    path = write_table(tmp_path / f"q{suffix}", [row("001-1", question="Où?")])
    text = path.read_text(encoding="utf-8").replace("\\u00f9", "ù")  # JSONL escapes it; undo that
    path.write_bytes(text.encode("latin-1"))  # a legacy export: "ù" is the lone byte 0xF9
    with pytest.raises(DataError, match="unreadable as UTF-8"):
        load_questions(path)


def test_rows_of_one_video_that_disagree_on_its_file_or_duration_are_named(tmp_path: Path) -> None:
    rows = [row("001-1"), row("001-2", duration="long"), row("001-3", videoID="other"), row("002-1")]
    with pytest.raises(DataError) as info:
        load_questions(write_json(tmp_path, rows))
    message = str(info.value)
    assert "row 2: field 'duration': 'long', but row 1 of the same video '001' says 'short'" in message
    assert "row 3: field 'videoID': 'other', but row 1 of the same video '001' says 'yt001'" in message
    assert "row 4" not in message


def test_one_file_behind_two_videos_is_refused_as_a_possible_leak(tmp_path: Path) -> None:
    rows = [row("001-1"), row("002-1", videoID="yt001"), row("003-1")]
    with pytest.raises(DataError) as info:
        load_questions(write_json(tmp_path, rows))
    message = str(info.value)
    assert "row 2: field 'videoID': 'yt001' is also the file of video '001' (row 1)" in message
    assert "two pools" in message
    assert len(load_questions(write_json(tmp_path, [rows[0], rows[2]], name="ok.json"))) == 2


@pytest.mark.parametrize("suffix", [".csv", ".tsv"])
def test_a_row_with_more_cells_than_the_header_is_named(tmp_path: Path, suffix: str) -> None:
    path = write_table(tmp_path / f"q{suffix}", [row("001-1"), row("002-1")])
    sep = "\t" if suffix == ".tsv" else ","
    lines = path.read_text().splitlines()
    path.write_text("\n".join([*lines[:2], lines[2] + sep + "stray"]) + "\n")
    with pytest.raises(
        DataError, match=rf"line 3: {len(REQUIRED_COLUMNS) + 1} cells for {len(REQUIRED_COLUMNS)}"
    ):
        load_questions(path)
