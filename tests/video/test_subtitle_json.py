"""LongVideoBench's JSON cue lists and Video-MME-v2's word-level JSON lines read as subtitles."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillharness.errors import DataError
from skillharness.video import load_subtitles


def test_longvideobench_json_cues_in_both_forms_move_onto_the_video_clock(tmp_path: Path) -> None:
    path = tmp_path / "v_en.json"
    cues = [
        {"start": "00:00:31.500", "end": "00:00:33.000", "line": "Look, a <i>red</i> circle."},
        {"timestamp": [40.0, None], "text": "Now it turns."},
        {"timestamp": [42.0, 43.5], "text": "The end."},
    ]
    path.write_text(json.dumps(cues), encoding="utf-8")
    subs = load_subtitles(path)
    assert [(line.start_s, line.end_s, line.text) for line in subs.lines] == [
        (31.5, 33.0, "Look, a red circle."),
        (40.0, 42.0, "Now it turns."),  # an open end runs to the next cue
        (42.0, 43.5, "The end."),
    ]
    shifted = subs.on_timeline(30.0)  # starting_timestamp_for_subtitles: the file clock at 0 s
    assert (shifted.lines[0].start_s, shifted.lines[0].text) == (1.5, "Look, a red circle.")


def test_videomme_v2_jsonl_words_are_one_cue_each(tmp_path: Path) -> None:
    path = tmp_path / "v.jsonl"
    words = [
        {"text": "Look,", "start_time": 1.0, "end_time": 1.4},
        {"text": "a", "start_time": 1.4, "end_time": 1.6},
    ]
    path.write_text("".join(json.dumps(w) + "\n" for w in words) + "\n", encoding="utf-8")
    assert [(line.start_s, line.end_s, line.text) for line in load_subtitles(path).lines] == [
        (1.0, 1.4, "Look,"),
        (1.4, 1.6, "a"),
    ]


@pytest.mark.parametrize(
    ("name", "text", "needle"),
    [
        ("a.json", '{"start": 1}', "expected a JSON list"),
        ("b.json", '[{"start": "00:00:01.000", "line": "x"}]', "cue 1"),
        ("c.jsonl", '{"text": "x", "start_time": 1}\n', "c.jsonl:1"),
    ],
)
def test_a_malformed_json_subtitle_file_is_a_data_error_naming_it(
    tmp_path: Path, name: str, text: str, needle: str
) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(DataError, match="malformed subtitles") as caught:
        load_subtitles(path)
    assert needle in str(caught.value)
