"""One helper turns a pydantic ValidationError into a user's message; nothing else reads .errors()."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from skillharness.util.model import StrictModel, ValidationProblem, describe_validation, validation_problems

SRC = Path(__file__).resolve().parents[2] / "src" / "skillharness"


class Inner(StrictModel):
    n: int


class Outer(StrictModel):
    items: list[Inner]
    name: str


def _error(data: object) -> ValidationError:
    with pytest.raises(ValidationError) as caught:
        Outer.model_validate(data)
    return caught.value


def test_each_problem_names_the_dotted_field_and_unknown_keys_by_name() -> None:
    exc = _error({"items": [{"n": 1}, {"n": "x", "extra": 2}], "name": "a"})
    problems = validation_problems(exc)
    assert [p.where for p in problems] == ["items.1.n", "items.1.extra"]
    assert str(problems[1]) == "items.1.extra: unknown key 'extra'"
    assert problems[0].kind == "int_parsing"


def test_a_container_error_caused_by_a_nested_one_is_left_out() -> None:
    exc = ValidationError.from_exception_data(
        "Outer",
        [
            {"type": "missing", "loc": ("items",), "input": {}},
            {"type": "missing", "loc": ("items", 0, "n"), "input": {}},
        ],
    )
    assert [p.loc for p in validation_problems(exc)] == [("items", 0, "n")]


def test_the_whole_value_is_named_root() -> None:
    assert ValidationProblem((), "Input should be an object", "model_type").where == "<root>"
    assert describe_validation(_error("not an object")).startswith("<root>: ")


def test_limit_counts_what_it_left_out_and_max_chars_bounds_the_text() -> None:
    exc = _error({"items": [{"n": "a"}, {"n": "b"}, {"n": "c"}]})  # and name missing
    assert describe_validation(exc, limit=1) == (
        "items.0.n: Input should be a valid integer, unable to parse string as an integer; "
        "... (4 problems in all)"
    )
    assert len(describe_validation(exc, max_chars=20)) == 20
    assert describe_validation(exc).count(";") == 3


def test_no_module_formats_validation_errors_by_hand() -> None:
    offenders = [
        str(path.relative_to(SRC))
        for path in SRC.rglob("*.py")
        if ".errors()" in path.read_text(encoding="utf-8") and path != SRC / "util" / "model.py"
    ]
    assert offenders == []
