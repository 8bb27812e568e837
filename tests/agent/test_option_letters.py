"""Questions with 2 to 10 options (A-J): normalisation, the reference extractors and prompts, and
the real agent loop against the simulator, which answers among a question's own letters."""

from __future__ import annotations

import asyncio
import json

import pytest
from agent_support import question as video_mme_question
from hypothesis import given, settings
from hypothesis import strategies as st

from skillharness.agent import Agent, AgentConfig, Prediction, PredictionStatus, TraceStep
from skillharness.agent.normalize import normalize_answer
from skillharness.agent.protocols.extract import lmms_eval_letter, official_letter, vlmevalkit_letter
from skillharness.agent.protocols.prompts import lmms_eval_text, official_text, vlmevalkit_texts
from skillharness.agent.video import LocalVideos
from skillharness.data.questions import OPTION_LETTERS, Question
from skillharness.infer.scoring import Parser, ScoredAnswer
from skillharness.llm import EndpointConfig, LLMConfig, build_chat_model
from skillharness.sim import SimConfig, SimServer
from skillharness.sim.config import AgentConfig as SimAgentConfig
from skillharness.sim.config import WorldConfig
from skillharness.skills.bundle import Bundle


def _question(qid: str, count: int, answer: str) -> Question:
    return Question(
        video_id="vid1",
        duration="short",
        videoID="vid1",
        question_id=qid,
        task_type="Counting Problem",  # a type the initial bundle has a skill for
        question=f"What happened first in {qid}?",
        options=tuple(f"{letter}. event number {i + 1}" for i, letter in enumerate(OPTION_LETTERS[:count])),
        answer=answer,
    )


FIVE, EIGHT = _question("five", 5, "E"), _question("eight", 8, "H")

# Shapes that name the letter alone; the option-text shape is checked apart (it needs the options).
_SHAPES = (
    lambda x: x,
    lambda x: f"({x.lower()})",
    lambda x: f"**{x}**",
    lambda x: f"The answer is {x}.",
    lambda x: f"Answer: {x}",
    lambda x: {"answer": x},
    lambda x: [x],
    lambda x: json.dumps({"answer": x}),
    lambda x: f"```json\n{json.dumps({'answer': x})}\n```",
    lambda x: f"{x}\n\nExplanation: the clip shows it.",
)


@st.composite
def _asked(draw: st.DrawFn) -> tuple[tuple[str, ...], tuple[str, ...], int]:
    count = draw(st.integers(min_value=2, max_value=10))
    letters = OPTION_LETTERS[:count]
    words = draw(
        st.lists(
            st.text("bcdfghkmnpqrstvwxz", min_size=4, max_size=9), min_size=count, max_size=count, unique=True
        )
    )
    options = tuple(f"{letter}. {word}" for letter, word in zip(letters, words, strict=True))
    return letters, options, draw(st.integers(min_value=0, max_value=count - 1))


@settings(max_examples=300, deadline=None)
@given(asked=_asked(), shape=st.integers(min_value=0, max_value=len(_SHAPES) - 1))
def test_every_shape_of_any_letter_a_to_j_is_that_letter(
    asked: tuple[tuple[str, ...], tuple[str, ...], int], shape: int
) -> None:
    letters, options, index = asked
    result = normalize_answer(_SHAPES[shape](letters[index]), letters, options)
    assert (result.letter, result.error) == (letters[index], None)


@settings(max_examples=200, deadline=None)
@given(asked=_asked())
def test_an_option_text_answers_with_its_letter_for_any_option_count(
    asked: tuple[tuple[str, ...], tuple[str, ...], int],
) -> None:
    letters, options, index = asked
    text = options[index][3:]
    assert normalize_answer(text, letters, options).letter == letters[index]
    assert normalize_answer(f"{letters[index]}. {text}", letters, options).letter == letters[index]


@settings(max_examples=200, deadline=None)
@given(asked=_asked(), beyond=st.sampled_from(OPTION_LETTERS))
def test_a_letter_past_the_last_option_is_a_parse_error(
    asked: tuple[tuple[str, ...], tuple[str, ...], int], beyond: str
) -> None:
    letters, options, _ = asked
    result = normalize_answer(f"The answer is {beyond}.", letters, options)
    if beyond in letters:
        assert result.letter == beyond
    else:
        assert result.letter is None
        assert f"letter {beyond!r} is not among the options" in (result.error or "")


@settings(max_examples=200, deadline=None)
@given(asked=_asked(), other=st.integers(min_value=0, max_value=9))
def test_two_different_letters_are_never_one_answer(
    asked: tuple[tuple[str, ...], tuple[str, ...], int], other: int
) -> None:
    letters, options, index = asked
    second = letters[other % len(letters)]
    result = normalize_answer([letters[index], second], letters, options)
    if second == letters[index]:
        assert result.letter == second
    else:
        assert result.letter is None
        assert "several different letters" in (result.error or "")


def test_the_pronoun_i_is_not_option_i() -> None:
    letters, options = OPTION_LETTERS, tuple(f"{x}. thing {x}" for x in OPTION_LETTERS)
    assert normalize_answer("I think the answer is C.", letters, options).letter == "C"
    assert normalize_answer("I think so.", letters, options).letter is None
    assert normalize_answer("The answer is I.", letters, options).letter == "I"
    assert normalize_answer("(J)", letters, options).letter == "J"


@pytest.mark.parametrize(
    ("reply", "letter"),
    [
        ("E", "E"),
        ("The answer is E.", "E"),
        ("(E) event number 5", "E"),
        ("Answer: H", "H"),
        ("I pick G.", "G"),
    ],
)
def test_the_reference_extractors_read_the_questions_own_letters(reply: str, letter: str) -> None:
    letters = EIGHT.letters
    assert lmms_eval_letter(reply, letters) == letter
    assert vlmevalkit_letter(reply, letters) == letter
    assert official_letter(reply, letters) == letter
    # Video-MME's four letters (the default) never read a fifth ("Answer: H" reads the A of "Answer").
    assert lmms_eval_letter(reply) in ("", "A", "B", "C", "D")
    assert vlmevalkit_letter("E") == official_letter("E") == lmms_eval_letter("E") == ""


def test_a_four_option_question_is_read_and_prompted_as_the_references_do() -> None:
    four = video_mme_question()
    assert lmms_eval_letter("The answer is (B).", four.letters) == lmms_eval_letter("The answer is (B).")
    assert "(A, B, C, or D)" in lmms_eval_text(four, None)
    assert "(A, B, C, or D)" in official_text(four, "a line")
    assert "(A, B, C, D, or E)" in lmms_eval_text(FIVE, "a line")
    assert "(A, B, C, D, E, F, G, or H)" in vlmevalkit_texts(EIGHT, "(A, B, C, or D) said")[1]
    assert "said" in vlmevalkit_texts(EIGHT, "(A, B, C, or D) said")[1], "subtitles are not rewritten"
    two = _question("two", 2, "B")
    assert "(A or B)" in official_text(two, None)


@pytest.mark.parametrize("parser", list(Parser))
def test_each_scorer_scores_an_e_and_an_h_right(parser: Parser) -> None:
    for asked in (FIVE, EIGHT):
        scored = ScoredAnswer(asked, 0, PredictionStatus.OK, asked.answer, f"The answer is {asked.answer}.")
        assert scored.reference_letter(parser) == asked.answer


class _Memory:
    def __init__(self) -> None:
        self.predictions: list[Prediction] = []

    async def write_step(self, step: TraceStep) -> None:
        return None

    async def write_prediction(self, prediction: Prediction) -> None:
        self.predictions.append(prediction)


# A world where the agent always intends the right letter and answers in the plain shape.
_RIGHT = SimConfig(
    seed=5,
    world=WorldConfig(base_min=1.0, base_max=1.0, floor=1.0, ceiling=1.0),
    agent=SimAgentConfig(awkward_rate=0.0),
)


@pytest.mark.sim_world(_RIGHT, questions=[FIVE, EIGHT])
async def test_a_five_and_an_eight_option_question_are_answered_through_the_agent_loop(
    sim: SimServer, default_bundle: Bundle, videos: LocalVideos
) -> None:
    llm = LLMConfig(model=sim.model_name, endpoints=(EndpointConfig(base_url=sim.base_url),))
    config = AgentConfig(initial_frames=2, max_frames=6)
    sink = _Memory()
    async with build_chat_model(llm, None) as stack:
        agent = Agent(stack, sim.model_name, default_bundle, videos, videos, config)
        got = await asyncio.gather(
            *(
                agent.answer(q, run_id="letters", sample_idx=s, sink=sink)
                for q in (FIVE, EIGHT)
                for s in range(3)
            )
        )
    assert [(p.question_id, p.status, p.answer, p.correct, p.error_message) for p in got] == [
        (q.question_id, PredictionStatus.OK, q.answer, True, None) for q in (FIVE, EIGHT) for _ in range(3)
    ]
    first = sim.stats()
    assert first["roles"]["agent"] >= 6
