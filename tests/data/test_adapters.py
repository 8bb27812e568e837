"""Each built-in adapter reads a small file written in its upstream layout to the expected
questions; a user's YAML adapter reads yet another layout."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from skillharness.data import (
    OPTION_LETTERS,
    VIDEO_MME,
    Question,
    builtin_adapters,
    load_adapter,
    load_benchmark,
    load_questions,
)
from skillharness.errors import DataError

BUILT_IN = ("egoschema", "longvideobench", "mlvu", "mvbench", "nextqa", "videomme", "videomme_v2")


def _json(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


def test_the_built_in_adapters_ship_with_the_package() -> None:
    assert tuple(sorted(builtin_adapters())) == BUILT_IN
    assert tuple("ABCDEFGHIJ") == OPTION_LETTERS


def test_videomme_adapter_loads_what_the_videomme_loader_loads(tmp_path: Path) -> None:
    rows = [
        {
            "video_id": "001",
            "duration": "short",
            "domain": "Knowledge",
            "sub_category": "Humanity & History",
            "url": "https://example.invalid/v",
            "videoID": "fFjv93ACGo8",
            "question_id": f"001-{k}",
            "task_type": "Counting Problem",
            "question": "How many?",
            "options": ["A. 1.", "B. 2.", "C. 3.", "D. 2."] if k == 1 else ["A. 1.", "B.2", "C. 3.", "D. 4."],
            "answer": "C",
        }
        for k in (1, 2)
    ]
    path = tmp_path / "test-00000-of-00001.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)
    loaded = load_benchmark(path, load_adapter("videomme"))
    assert list(loaded.questions) == load_questions(path)
    assert loaded.benchmark == VIDEO_MME, "the videomme adapter keeps Video-MME's 12 task types"
    assert loaded.questions[1].options[1] == "B.2", "an option already lettered is kept as written"
    assert loaded.questions[0].clip_start is None
    assert loaded.questions[0].subtitle_path is None


def test_real_videomme_through_its_adapter(videomme_questions_path: Path) -> None:
    loaded = load_benchmark(videomme_questions_path, load_adapter("videomme"))
    assert list(loaded.questions) == load_questions(videomme_questions_path)


def _v2_row(
    video: str, k: int, group_type: str = "relevance", structure: str = "[1, 2, 3, 4]"
) -> dict[str, Any]:
    """A row of Video-MME-v2's test.parquet (the columns its readers use)."""
    return {
        "video_id": video,
        "question_id": f"{video}-{k}",
        "question": f"Which {k}?",
        "options": "\n".join(f"{x}. choice {x.lower()}" for x in "ABCDEFGH"),
        "answer": "F",
        "level": 2,
        "group_type": group_type,
        "group_structure": structure,
        "second_head": "Temporal Reasoning",
        "third_head": "Order",
    }


def _parquet(path: Path, rows: list[dict[str, Any]]) -> Path:
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


def test_videomme_v2_options_come_one_per_line_with_the_group(tmp_path: Path) -> None:
    rows = [_v2_row("001", k, "logic", "[1, [2, 3], 4]") for k in (2, 1, 3, 4)]
    first, second, *_ = load_benchmark(
        _parquet(tmp_path / "test.parquet", rows), load_adapter("videomme_v2")
    ).questions
    assert first.options[7] == "H. choice h"
    assert first.answer == "F"
    assert first.task_type == "Temporal Reasoning"
    assert first.subtitle_path == "subtitle/001.jsonl"
    assert (first.question_id, second.question_id) == ("001-2", "001-1"), "the file's own ids"
    assert (first.group_type, first.group_structure) == ("logic", "[1, [2, 3], 4]")


@pytest.mark.parametrize(
    ("kind", "structure", "needle"),
    [
        ("consistency", "[1, 2, 3, 4]", "group_type"),
        ("logic", "[1, 2, [3, 4]]", "none of the known logic structures"),
        ("logic", "", "not a literal list"),
    ],
)
def test_a_bad_group_names_the_row_and_field(tmp_path: Path, kind: str, structure: str, needle: str) -> None:
    rows = [_v2_row("007", k) for k in (1, 2, 3)] + [_v2_row("007", 4, kind, structure)]
    with pytest.raises(DataError, match=needle) as caught:
        load_benchmark(_parquet(tmp_path / "test.parquet", rows), load_adapter("videomme_v2"))
    assert "row 4" in str(caught.value)
    assert "007-4" in str(caught.value)


def test_a_video_whose_questions_disagree_on_their_group_is_refused(tmp_path: Path) -> None:
    rows = [_v2_row("003", k) for k in (1, 2, 3)] + [_v2_row("003", 4, "logic", "[1, 2, 3, 4]")]
    with pytest.raises(DataError, match="video '003': its questions disagree on their group"):
        load_benchmark(_parquet(tmp_path / "test.parquet", rows), load_adapter("videomme_v2"))


def test_a_grouped_question_needs_its_place_in_the_question_id(tmp_path: Path) -> None:
    rows = [{**_v2_row("004", k), "question_id": f"q{k}"} for k in (1, 2)]
    with pytest.raises(DataError, match="must end in '-<number>'"):
        load_benchmark(_parquet(tmp_path / "test.parquet", rows), load_adapter("videomme_v2"))


def test_mvbench_reads_one_file_per_task_with_its_clip_windows(tmp_path: Path) -> None:
    _json(
        tmp_path / "json" / "action_sequence.json",
        [
            {
                "video": "ZS9XR.mp4",
                "question": "What did the person do first?",
                "candidates": ["Took the towel.", "Sat on the bed.", "Opened the door.", "Closed the box."],
                "answer": "Opened the door.",
                "start": 11.2,
                "end": 19.5,
            }
        ],
    )
    _json(
        tmp_path / "json" / "action_antonym.json",
        [
            {
                "video": "166583.webm",
                "question": "What is the action?",
                "candidates": ["Pushing it away", "Pulling it closer", "Not sure"],
                "answer": "Not sure",
            }
        ],
    )
    loaded = load_benchmark(tmp_path / "json", load_adapter("mvbench"))
    by_id = {q.question_id: q for q in loaded.questions}
    sequence, antonym = by_id["action_sequence-1"], by_id["action_antonym-1"]
    assert (sequence.task_type, sequence.answer, sequence.clip_start, sequence.clip_end) == (
        "Action Sequence",
        "C",
        11.2,
        19.5,
    )
    assert (antonym.task_type, antonym.answer, antonym.letters) == ("Action Antonym", "C", ("A", "B", "C"))
    assert antonym.clip_start is None, "a row without start/end is about the whole video"
    assert len(loaded.benchmark.task_types) == 20


def test_egoschema_joins_the_public_answers_and_leaves_out_the_rest(tmp_path: Path) -> None:
    rows = [
        {
            "q_uid": uid,
            "google_drive_id": "x",
            "question": "What is C doing overall?",
            **{f"option {i}": f"activity {i}" for i in range(5)},
        }
        for uid in ("0074f737-11cb", "00b9a0de-c59e", "ffff0000-aaaa")
    ]
    path = _json(tmp_path / "questions.json", rows)
    _json(tmp_path / "subset_answers.json", {"0074f737-11cb": 3, "00b9a0de-c59e": 0})
    loaded = load_benchmark(path, load_adapter("egoschema"))
    answered = [(q.question_id, q.answer) for q in loaded.questions]
    assert answered == [("0074f737-11cb", "D"), ("00b9a0de-c59e", "A")]
    assert loaded.dropped == ("ffff0000-aaaa",)
    assert loaded.benchmark.task_types == ("Egocentric Reasoning",)
    assert loaded.questions[0].videoID == "0074f737-11cb"


def test_longvideobench_index_answers_duration_groups_and_subtitles(tmp_path: Path) -> None:
    def item(k: int, candidates: list[str], choice: int) -> dict[str, Any]:
        return {
            "video_id": f"vid{k}",
            "id": f"vid{k}_0",
            "video_path": f"vid{k}.mp4",
            "question": "When?",
            "candidates": candidates,
            "correct_choice": choice,
            "duration": 512.3,
            "duration_group": 600,
            "question_category": "T3O",
            "topic_category": "NP-News-Programs",
            "subtitle_path": f"vid{k}_en.json",
            "starting_timestamp_for_subtitles": 12.5,
        }

    path = _json(tmp_path / "lvb_val.json", [item(1, ["a", "b", "c", "d"], 3), item(2, list("vwxyz"), 4)])
    loaded = load_benchmark(path, load_adapter("longvideobench"))
    first, second = loaded.questions
    assert (first.answer, second.answer, len(second.options)) == ("D", "E", 5)
    assert (first.duration, first.task_type, first.videoID) == ("600", "T3O", "vid1.mp4")
    assert (first.subtitle_path, first.subtitle_offset) == ("vid1_en.json", 12.5)
    assert loaded.benchmark.durations == ("600",)


def test_mlvu_reads_its_multiple_choice_files_only(tmp_path: Path) -> None:
    _json(
        tmp_path / "1_plotQA.json",
        [
            {
                "video": "movie101_66.mp4",
                "duration": 246,
                "question": "What color?",
                "candidates": ["Yellow", "Red", "Green", "Blue"],
                "answer": "Yellow",
                "question_type": "plotQA",
            }
        ],
    )
    _json(
        tmp_path / "4_count.json",
        [
            {
                "video": "count_126.mp4",
                "duration": 572.9,
                "question": "How many times?",
                "candidates": ["2", "1", "5", "4"],
                "answer": "1",
                "question_type": "count",
            }
        ],
    )
    _json(tmp_path / "9_summary.json", [{"video": "s.mp4", "question": "Summarize.", "answer": "…"}])
    loaded = load_benchmark(tmp_path, load_adapter("mlvu"))
    assert [(q.question_id, q.task_type, q.answer) for q in loaded.questions] == [
        ("1_plotQA-1", "plotQA", "A"),
        ("4_count-1", "count", "B"),
    ]
    assert loaded.benchmark.task_types == ("count", "plotQA")


def test_nextqa_reads_option_columns_and_a_composite_id(tmp_path: Path) -> None:
    path = tmp_path / "val.csv"
    header = ["video", "frame_count", "width", "height", "question", "answer", "qid", "type"]
    header += [f"a{i}" for i in range(5)]
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerow(
            [
                4010069381,
                369,
                640,
                480,
                "how do the two man play the instrument",
                2,
                6,
                "CH",
                "roll the handle",
                "tap their feet",
                "strum the string",
                "hit with sticks",
                "pat",
            ]
        )
    (q,) = load_benchmark(path, load_adapter("nextqa")).questions
    assert (q.question_id, q.video_id, q.task_type, q.answer) == ("4010069381_6", "4010069381", "CH", "C")
    assert q.options[2] == "C. strum the string"


def test_a_users_yaml_adapter_reads_another_layout(tmp_path: Path) -> None:
    adapter_file = tmp_path / "mybench.yaml"
    adapter_file.write_text(
        "format: jsonl\n"
        "video_id: clip\n"
        "question_id: {template: '{clip}#{n}'}\n"
        "question: prompt\n"
        "task_type: {constant: Gesture}\n"
        "options: {form: list, field: choices, prefixed: true}\n"
        "answer: {field: gold, form: index1}\n"
        "clip: {start: t0, end: t1}\n"
    )
    rows = [
        {
            "clip": "c1",
            "n": 1,
            "prompt": "Which hand?",
            "choices": ["(A) left", "(B) right"],
            "gold": 2,
            "t0": 0,
            "t1": 4.5,
        },
        {"clip": "c1", "n": 2, "prompt": "Waved?", "choices": ["A) yes", "B) no", "C) maybe"], "gold": 1},
    ]
    path = tmp_path / "q.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    adapter = load_adapter(adapter_file)
    assert adapter.name == "mybench", "the file name names an adapter that does not"
    first, second = load_benchmark(path, adapter).questions
    assert first == Question(
        video_id="c1",
        duration="all",
        videoID="c1",
        question_id="c1#1",
        task_type="Gesture",
        question="Which hand?",
        options=("A. left", "B. right"),
        answer="B",
        clip_start=0.0,
        clip_end=4.5,
    )
    assert (second.question_id, second.options[2], second.answer) == ("c1#2", "C. maybe", "A")


@pytest.mark.parametrize("name", BUILT_IN)
def test_every_built_in_adapter_names_its_required_fields(name: str) -> None:
    adapter = load_adapter(name)
    assert adapter.name == name
    assert adapter.question.field in adapter.required_fields


def test_a_blank_option_between_filled_ones_is_refused_a_trailing_one_shortens_the_row(
    tmp_path: Path,
) -> None:
    """Dropped in place, a middle blank moves the later options up a letter: an index answer of 3
    ("activity 3") would load as the letter of "activity 4", silently."""
    rows = [
        {
            "q_uid": "u1",
            "google_drive_id": "x",
            "question": "q?",
            **{f"option {i}": f"activity {i}" for i in range(5)},
        }
    ]
    rows[0]["option 2"] = None
    path = _json(tmp_path / "questions.json", rows)
    _json(tmp_path / "subset_answers.json", {"u1": 3})
    with pytest.raises(DataError, match="option column\\(s\\) option 2 empty between filled ones"):
        load_benchmark(path, load_adapter("egoschema"))
    rows[0]["option 2"], rows[0]["option 4"] = "activity 2", None
    _json(tmp_path / "questions.json", rows)
    (question,) = load_benchmark(path, load_adapter("egoschema")).questions
    assert len(question.options) == 4
    assert question.answer == "D"
    assert question.options[3] == "D. activity 3"
