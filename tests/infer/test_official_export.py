"""``is_official_export``: which files ``infer --export-official`` may replace."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from skillharness.infer import is_official_export

_QUESTION = {"question_id": "v1-1", "task_type": "OCR Problems", "answer": "A"}
_VIDEO = {"video_id": "v1", "duration": "short", "domain": "d", "sub_category": "s"}


def _write(tmp_path: Path, doc: Any) -> Path:
    path = tmp_path / "results.json"
    path.write_text(json.dumps(doc))
    return path


def test_an_earlier_export_is_ours(tmp_path: Path) -> None:
    export = [{**_VIDEO, "missing": False, "questions": [{**_QUESTION, "response": "A"}]}]
    assert is_official_export(_write(tmp_path, export))


@pytest.mark.parametrize(
    "doc",
    [
        [],  # all() over no video must not claim a user's empty list
        [{**_VIDEO, "questions": [_QUESTION]}],  # a questions file in the same layout
        {"missing": True},
        "not a list",
    ],
    ids=["empty-list", "questions-layout", "object", "string"],
)
def test_other_files_are_not_ours(tmp_path: Path, doc: Any) -> None:
    assert not is_official_export(_write(tmp_path, doc))


def test_a_file_that_is_not_json_is_not_ours(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    path.write_bytes(b"\xff not json")
    assert not is_official_export(path)
