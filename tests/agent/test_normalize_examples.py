"""Answer normalization, example by example: each documented shape, near-misses, exact reasons."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence

import pytest

from skillharness.agent.normalize import Normalized, normalize_answer

LETTERS = ("A", "B", "C", "D")
OPTIONS = ("A. The candles are out", "B. The candles are lit", "C. Three dogs", "D. Nobody")
COUNTS = ("A. 3", "B. 5", "C. 7", "D. 10")


@pytest.mark.parametrize(
    ("raw", "letter"),
    [
        ("B", "B"),
        ("b", "B"),
        ("(b)", "B"),
        ("[B]", "B"),
        ("**B**", "B"),
        ("'B'.", "B"),
        ("B. because the candles are lit", "B"),
        ("B: candles", "B"),
        ("(B) the lit ones", "B"),
        ("I think (B) fits best here", "B"),
        ("I think [c] fits", "C"),
        ("The answer is B.", "B"),
        ("Answer: B", "B"),
        ("answer = D", "D"),
        ("My choice is C, clearly", "C"),
        ("The candles are lit", "B"),
        ("the candles are LIT!", "B"),
        ("  The   candles are lit. ", "B"),
        ("Reasoning first.\n\nC", "C"),
        ('"B"', "B"),
        ('{"answer": "B"}', "B"),
        ('{" Final_Answer ": "b"}', "B"),
        ('["C"]', "C"),
        ('{"answer": ["D"]}', "D"),
        ('```json\n{"answer": "A"}\n```', "A"),
        ("```\nB\n```", "B"),
        ({"choice": "B"}, "B"),
        ({"result": {"option": "C"}}, "C"),
        (["B"], "B"),
        (("B", "b"), "B"),
        ({"B"}, "B"),
        (frozenset({"C"}), "C"),
        ({"answer": ["B"]}, "B"),
        ({"answer": {"letter": "a"}}, "A"),
        ("Ｃ", "C"),
    ],
)
def test_documented_shapes(raw: object, letter: str) -> None:
    result = normalize_answer(raw, LETTERS, OPTIONS)
    assert result == Normalized(letter)
    assert result.ok


@pytest.mark.parametrize(
    ("raw", "error"),
    [
        ("", "empty answer"),
        ("  \n ", "empty answer"),
        ("I am not sure", "no option letter found in 'I am not sure'"),
        ("null", "no option letter found in 'null'"),
        ("The candles", "no option letter found in 'The candles'"),
        ([], "no option letter found in []"),
        ("A or C", "several different letters ['A', 'C'] in 'A or C'"),
        ("A\nB", "several different letters ['A', 'B'] in 'A\\nB'"),
        ({"answer": ["B", "C"]}, "several different letters ['B', 'C'] in {'answer': ['B', 'C']}"),
        ("E", "letter 'E' is not among the options ['A', 'B', 'C', 'D']"),
        ({"answer": "z"}, "letter 'Z' is not among the options ['A', 'B', 'C', 'D']"),
        (None, "not an answer: None"),
        (True, "not an answer: True"),
        (False, "not an answer: False"),
        (2, "not an answer: 2"),
        (b"B", "not an answer: b'B'"),
        (bytearray(b"B"), "not an answer: bytearray(b'B')"),
        (["B", None], "not an answer: None"),
        ({"reason": "B"}, "no answer field in {'reason': 'B'}"),
        ({1: "B"}, "no answer field in {1: 'B'}"),
        ({"a": {"answer": "B"}, "b": 1}, "no answer field in {'a': {'answer': 'B'}, 'b': 1}"),
        ({"note": "x" * 100}, "no answer field in {'note': '" + "x" * 67 + "..."),
    ],
)
def test_near_misses_are_parse_errors_with_their_reason(raw: object, error: str) -> None:
    result = normalize_answer(raw, LETTERS, OPTIONS)
    assert result == Normalized(None, error)
    assert not result.ok


def _nested(levels: int) -> object:
    value: object = "B"
    for _ in range(levels):
        value = [value]
    return value


def test_nesting_is_read_up_to_six_levels_and_refused_beyond() -> None:
    assert normalize_answer(_nested(6), LETTERS).letter == "B"
    assert normalize_answer(_nested(7), LETTERS) == Normalized(None, "answer nested too deeply")


def test_answers_up_to_20000_characters_are_read_and_longer_ones_refused() -> None:
    assert normalize_answer("B" + " " * 19_999, LETTERS).letter == "B"
    assert normalize_answer("B" + " " * 20_000, LETTERS) == Normalized(
        None, "answer too long (20001 characters)"
    )


@pytest.mark.parametrize(
    ("raw", "letter"), [(5, "B"), (5.0, "B"), (10, "D"), ("7", "C"), ({"answer": 3}, "A")]
)
def test_numbers_answer_through_the_option_text(raw: object, letter: str) -> None:
    assert normalize_answer(raw, LETTERS, COUNTS).letter == letter


@pytest.mark.parametrize(("raw", "shown"), [(7.5, "7.5"), (11, "11"), (5.5, "5.5")])
def test_a_number_that_is_no_option_text_is_not_an_answer(raw: object, shown: str) -> None:
    assert normalize_answer(raw, LETTERS, COUNTS) == Normalized(None, f"not an answer: {shown}")


def test_an_option_text_shared_by_two_options_names_no_letter() -> None:
    options = ("A. Same", "B. Same", "C. Other", "D. More")
    assert normalize_answer("same", LETTERS, options).letter is None
    assert normalize_answer("other", LETTERS, options).letter == "C"


def test_only_the_options_of_the_given_letters_count() -> None:
    # Three letters: the fourth option text is not an answer.
    assert normalize_answer("Nobody", ("A", "B", "C"), OPTIONS).letter is None
    assert normalize_answer("Three dogs", ("A", "B", "C"), OPTIONS).letter == "C"


def test_lower_case_letters_of_the_question_are_accepted() -> None:
    assert normalize_answer("B", ("a", "b")) == Normalized("B")


class _Exploding(Sequence[str]):
    """A sequence that fails as it is read."""

    def __len__(self) -> int:
        return 1

    def __getitem__(self, index: int) -> str:  # type: ignore[override]
        raise RuntimeError("boom")

    def __iter__(self) -> Iterator[str]:
        raise RuntimeError("boom")


class _NoRepr:
    def __repr__(self) -> str:
        raise ValueError("no repr")


def test_an_object_that_fails_while_read_is_a_parse_error_never_an_exception() -> None:
    assert normalize_answer(_Exploding(), LETTERS) == Normalized(None, "unreadable answer (RuntimeError)")
    assert normalize_answer("B", _Exploding()) == Normalized(None, "unreadable answer (RuntimeError)")
    assert normalize_answer(_NoRepr(), LETTERS) == Normalized(None, "not an answer: <_NoRepr>")


def test_json_text_is_judged_by_its_structure() -> None:
    assert normalize_answer(json.dumps({"answer": None}), LETTERS) == Normalized(None, "not an answer: None")
    assert normalize_answer('{"answer": B}', LETTERS, OPTIONS).letter is None  # not JSON, not an answer


def _wrapped(levels: int, key: str, inner: object) -> object:
    value = inner
    for _ in range(levels):
        value = {key: value}
    return value


def test_answer_objects_are_read_up_to_six_levels_and_refused_beyond() -> None:
    assert normalize_answer(_wrapped(6, "answer", "B"), LETTERS).letter == "B"
    assert normalize_answer(_wrapped(7, "answer", "B"), LETTERS) == Normalized(
        None, "answer nested too deeply"
    )


def test_single_key_wrappers_count_as_levels_too() -> None:
    assert normalize_answer(_wrapped(5, "result", {"answer": "B"}), LETTERS).letter == "B"
    deep = _wrapped(6, "result", {"answer": "B"})
    assert normalize_answer(deep, LETTERS) == Normalized(None, "answer nested too deeply")


def test_json_text_counts_as_one_level() -> None:
    assert normalize_answer(json.dumps(_nested(5)), LETTERS).letter == "B"
    assert normalize_answer(json.dumps(_nested(6)), LETTERS) == Normalized(None, "answer nested too deeply")


def test_one_character_option_texts_are_never_cut_out_of_the_answer() -> None:
    # Grades as options: cutting the option texts "B", "A", ... would leave no letter at all.
    grades = ("A. B", "B. A", "C. C", "D. D")
    assert normalize_answer("Answer: B", LETTERS, grades).letter == "B"


@pytest.mark.parametrize(("length", "cut"), [(68, False), (69, True)])
def test_an_answer_is_quoted_whole_up_to_80_characters(length: int, cut: bool) -> None:
    raw = {"note": "x" * length}
    assert len(repr(raw)) == length + 12
    shown = repr(raw)[:77] + "..." if cut else repr(raw)
    assert normalize_answer(raw, LETTERS) == Normalized(None, f"no answer field in {shown}")


def test_the_longest_option_text_is_cut_first() -> None:
    # Cutting "Plan" first would break "Plan (A) now" apart and leave its "(A)" to be read.
    options = ("A. Plan", "B. Plan (A) now", "C. Other", "D. None")
    assert normalize_answer("B) Plan (A) now", LETTERS, options) == Normalized("B")
