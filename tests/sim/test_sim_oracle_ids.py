"""``sim oracle --ids``: a file naming no question is an error naming it, not an accuracy of 0."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sim_support import make_questions
from typer.testing import CliRunner, Result

from cli_support import command_app
from skillharness.commands.sim import register
from skillharness.errors import ConfigError

APP = command_app(register)


@pytest.fixture
def questions_file(tmp_path: Path) -> Path:
    path = tmp_path / "questions.json"
    path.write_text(json.dumps([q.model_dump() for q in make_questions(2)]), encoding="utf-8")
    return path


def _oracle(questions: Path, ids: Path) -> Result:
    return CliRunner().invoke(
        APP, ["sim", "oracle", "--questions", str(questions), "--ids", str(ids), "--seed", "1", "--json"]
    )


@pytest.mark.parametrize("text", ["", "\n  \n\n"])
def test_an_ids_file_naming_no_question_is_refused_naming_the_file(
    tmp_path: Path, questions_file: Path, text: str
) -> None:
    ids = tmp_path / "pool.txt"
    ids.write_text(text, encoding="utf-8")
    result = _oracle(questions_file, ids)
    assert isinstance(result.exception, ConfigError), result.output
    assert str(ids) in str(result.exception)
    assert "no question id" in str(result.exception)
    assert "accuracy" not in result.output


def test_an_ids_file_with_ids_still_scores_them(tmp_path: Path, questions_file: Path) -> None:
    first = make_questions(2)[0].question_id
    ids = tmp_path / "pool.txt"
    ids.write_text(f"{first}\n", encoding="utf-8")
    result = _oracle(questions_file, ids)
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["n"] == 1
