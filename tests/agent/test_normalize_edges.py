"""Answer normalization edge cases (audit P0-4): option texts holding letters, unicode, numbers."""

from __future__ import annotations

import pytest

from skillharness.agent.normalize import normalize_answer

LETTERS = ("A", "B", "C", "D")
OPTIONS = ("A. Plan B", "B. The man picks option A", "C. Vitamin D", "D. A dog (C) runs")
COUNTS = ("A. 3", "B. 5", "C. 7", "D. 10")


@pytest.mark.parametrize(
    ("raw", "letter"),
    [
        ("B) The man picks option A", "B"),
        ("B: The man picks option A", "B"),
        ("The answer is B. The man picks option A", "B"),
        ("D) A dog (C) runs", "D"),
        ("Answer: D. A dog (C) runs", "D"),
        ("The answer is C, vitamin d", "C"),
    ],
)
def test_p0_4_letters_inside_an_option_text_do_not_count(raw: str, letter: str) -> None:
    assert normalize_answer(raw, LETTERS, OPTIONS).letter == letter


@pytest.mark.parametrize(
    ("raw", "letter"), [("Ｂ", "B"), ("（ｂ）", "B"), ("B\u200b", "B"), ("\ufeffC", "C")]
)
def test_p0_4_full_width_and_invisible_characters_normalize(raw: str, letter: str) -> None:
    assert normalize_answer(raw, LETTERS, OPTIONS).letter == letter


def test_p0_4_full_width_letter_with_option_text_is_not_read_as_another_letter() -> None:
    # Before the fix the full-width B was invisible and "option A" inside the text won: a wrong letter.
    assert normalize_answer("Ｂ. The man picks option A", LETTERS, OPTIONS).letter == "B"


def test_p0_4_a_leading_letter_line_is_never_overruled_by_a_later_mention() -> None:
    result = normalize_answer("B\n\nExplanation: option A is wrong", LETTERS, OPTIONS)
    assert result.letter != "A"  # two letters named: a parse error, never the other letter
    assert normalize_answer("B\n\nThe man clearly picks it.", LETTERS, OPTIONS).letter == "B"


@pytest.mark.parametrize(("raw", "letter"), [(5, "B"), (10.0, "D"), ({"answer": 7}, "C"), ("3", "A")])
def test_p0_4_a_number_answers_through_the_option_text(raw: object, letter: str) -> None:
    assert normalize_answer(raw, LETTERS, COUNTS).letter == letter


@pytest.mark.parametrize("raw", [4, 7.5, float("inf"), True])
def test_p0_4_a_number_that_is_no_option_is_a_parse_error(raw: object) -> None:
    result = normalize_answer(raw, LETTERS, COUNTS)
    assert result.letter is None
    assert result.error


def test_p0_4_an_answer_object_inside_a_single_wrapper_is_read() -> None:
    assert normalize_answer('{"result": {"answer": "C"}}', LETTERS, OPTIONS).letter == "C"
    assert normalize_answer({"reason": "B", "other": {"answer": "C"}}, LETTERS, OPTIONS).letter is None


@pytest.mark.parametrize("raw", ["a dog", "I think it is a dog", "The answer is a dog", "A or B", "a or b"])
def test_p0_4_articles_and_alternatives_never_become_a_letter(raw: str) -> None:
    assert normalize_answer(raw, LETTERS, ("A. cat", "B. bird", "C. fish", "D. cow")).letter is None


@pytest.mark.parametrize(
    "raw", ["Answer: B or C", "The answer is A or B.", "Answer: B/C", "Answer: B, C", "B, C, or D"]
)
def test_p0_4_a_cued_alternative_is_never_resolved_to_its_first_letter(raw: str) -> None:
    result = normalize_answer(raw, LETTERS, ("A. cat", "B. bird", "C. fish", "D. cow"))
    assert result.letter is None
    assert "several different letters" in (result.error or "")


@pytest.mark.parametrize(
    "raw", ["Answer: B, because the bird flies", "The answer is B and a bird flies", "answer is B. Not C"]
)
def test_p0_4_a_cued_letter_followed_by_prose_is_read(raw: str) -> None:
    assert normalize_answer(raw, LETTERS, ("A. cat", "B. bird", "C. fish", "D. cow")).letter == "B"


def test_p0_4_every_line_that_is_only_a_letter_counts() -> None:
    assert normalize_answer("A\nB", LETTERS, OPTIONS).letter is None
    assert normalize_answer("Reasoning first.\n\nC", LETTERS, OPTIONS).letter == "C"
