"""Answer normalization (audit P0-4): every shape → a letter or a parse error, never an exception."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillharness.agent.normalize import normalize_answer

LETTERS = ("A", "B", "C", "D")
OPTIONS = ("A. One apple", "B. Candles", "C. Three dogs", "D. (c) copyright")

SHAPES = [
    lambda x: x,
    lambda x: x.lower(),
    lambda x: f"({x.lower()})",
    lambda x: f"{x}.",
    lambda x: f"**{x}**",
    lambda x: f"{x}. {OPTIONS['ABCD'.index(x)][3:]}",
    lambda x: f"The answer is {x}.",
    lambda x: f"Answer: {x}",
    lambda x: {"answer": x},
    lambda x: [x],
    lambda x: {"answer": [x]},
    lambda x: {"Answer": {"letter": x.lower()}},
    lambda x: json.dumps({"answer": [x]}),
    lambda x: json.dumps([x]),
    lambda x: json.dumps(x),
    lambda x: f"```json\n{json.dumps({'answer': x})}\n```",
    lambda x: OPTIONS["ABCD".index(x)][3:],
    lambda x: OPTIONS["ABCD".index(x)][3:].upper() + "!",
    lambda x: [x, x.lower()],
]


@pytest.mark.parametrize("shape", range(len(SHAPES)))
@pytest.mark.parametrize("letter", LETTERS)
def test_every_documented_shape_normalizes(shape: int, letter: str) -> None:
    result = normalize_answer(SHAPES[shape](letter), LETTERS, OPTIONS)
    assert (result.letter, result.error) == (letter, None)


@pytest.mark.parametrize(
    "raw",
    [
        None, "", "   ", 2, 1.5, True, {}, [], {"reason": "B"}, ["A", "B"], {"answer": ["B", "C"]},
        "A or C", "(A) and (C)", "E", "(e)", {"answer": "Z"}, "I am not sure", "the answer is a cat",
        json.dumps({"answer": ["A", "D"]}), b"B", object(), float("nan"), [[[[[[[["B"]]]]]]]],
    ],
)  # fmt: skip
def test_non_answers_are_parse_errors_with_a_reason(raw: object) -> None:
    result = normalize_answer(raw, LETTERS, OPTIONS)
    assert result.letter is None
    assert result.error


def test_a_letter_outside_the_options_names_the_options() -> None:
    result = normalize_answer("D", ("A", "B", "C"), OPTIONS[:3])
    assert result.letter is None
    assert "not among the options" in (result.error or "")


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30) | st.sampled_from(LETTERS),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)
_anything = _json | st.binary(max_size=20) | st.builds(object) | st.sets(st.integers(), max_size=3)


@settings(max_examples=200, deadline=None)
@given(raw=_anything, letters=st.lists(st.sampled_from("ABCDEFGH"), min_size=1, max_size=6, unique=True))
def test_any_object_gives_a_letter_among_the_options_or_a_reason(raw: object, letters: list[str]) -> None:
    result = normalize_answer(raw, letters, [])
    assert (result.letter is None) != (result.error is None)
    assert result.letter is None or result.letter in letters


@settings(max_examples=200, deadline=None)
@given(raw=_json)
def test_json_text_of_a_value_normalizes_like_the_value(raw: object) -> None:
    if isinstance(raw, str | int | float | bool) or raw is None:
        return  # JSON text of a scalar is just text: covered by the shape tests
    text = json.dumps(raw, allow_nan=True)
    assert normalize_answer(text, LETTERS, OPTIONS).letter == normalize_answer(raw, LETTERS, OPTIONS).letter


@settings(max_examples=200, deadline=None)
@given(
    first=st.sampled_from(LETTERS),
    second=st.sampled_from(LETTERS),
    wrap=st.sampled_from(["list", "dict", "json"]),
)
def test_two_different_letters_are_never_resolved(first: str, second: str, wrap: str) -> None:
    value: object = [first, second]
    if wrap == "dict":
        value = {"answer": value}
    elif wrap == "json":
        value = json.dumps({"answer": value})
    result = normalize_answer(value, LETTERS, OPTIONS)
    assert result.letter == (first if first == second else None)


_option_text = st.from_regex(r"[a-z]{3,8}( [a-z]{2,8}){0,3}", fullmatch=True)


@settings(max_examples=100, deadline=None)
@given(
    texts=st.lists(_option_text, min_size=2, max_size=4, unique=True),
    pick=st.integers(0, 3),
    shout=st.booleans(),
)
def test_the_option_text_itself_names_its_letter(texts: list[str], pick: int, shout: bool) -> None:
    letters = LETTERS[: len(texts)]
    options = [f"{letter}. {text}" for letter, text in zip(letters, texts, strict=True)]
    index = pick % len(texts)
    said = texts[index].upper() + "." if shout else f"  {texts[index]} "
    assert normalize_answer(said, letters, options).letter == letters[index]
