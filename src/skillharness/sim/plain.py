"""Plain requests: a question asked without tools (a reference protocol's one turn) gets text.

The model intends the right letter with the world's probability for the request's instruction
text (system messages + first user message: a bundle given the system slot still helps), then
writes its answer in one of the shapes real models give: ``"C"``, ``"C."``, ``"The best answer is
C"``, the option's text (``"Berries"``) or a sentence that names no option. The three scorers
read those shapes differently (the reference extractors read ``"Berries"`` as ``B``, whatever the
options say), and :func:`plain_expectation` gives each scorer's exact expected result.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from skillharness.agent import lmms_eval_letter, normalize_answer, official_letter, vlmevalkit_letter
from skillharness.data.questions import Question
from skillharness.sim.config import PlainShape
from skillharness.sim.draw import digest, rng_for, uniform, weighted_choice
from skillharness.sim.prompt import draw_index, instruction_text, prompt_tokens
from skillharness.sim.wire import Reply, estimate_tokens
from skillharness.sim.world import World

__all__ = ["NO_LETTER_TEXT", "PlainExpectation", "PlainRole", "plain_expectation", "render_plain"]

NO_LETTER_TEXT = "I am not sure; the video does not show enough to tell."
_PREFIX = re.compile(r"^\s*[A-Z][.)]\s*")


def render_plain(question: Question, letter: str, shape: PlainShape) -> str:
    """The text a model answering ``letter`` writes in ``shape``."""
    if shape is PlainShape.LETTER:
        return letter
    if shape is PlainShape.LETTER_DOT:
        return f"{letter}."
    if shape is PlainShape.BEST_ANSWER:
        return f"The best answer is {letter}"
    if shape is PlainShape.OPTION_TEXT:
        option = question.options[question.letters.index(letter)]
        return _PREFIX.sub("", option).rstrip(".").strip()
    return NO_LETTER_TEXT


@dataclass(frozen=True)
class PlainExpectation:
    """Expected values for one question: P(right) per scorer, and P(counted) for the official one."""

    ours: float
    lmms_eval: float
    vlmevalkit: float
    official_correct: float
    official_answered: float


def _reads(question: Question, text: str) -> tuple[bool, bool, bool, bool, bool]:
    """(ours right, lmms-eval right, VLMEvalKit right, official right, official read a letter)."""
    ours = normalize_answer(text, question.letters, question.options).letter == question.answer
    official = official_letter(text, question.letters)
    return (
        ours,
        lmms_eval_letter(text, question.letters) == question.answer,
        vlmevalkit_letter(text, question.letters) == question.answer,
        official == question.answer,
        official != "",
    )


def plain_expectation(world: World, question: Question, text: str) -> PlainExpectation:
    """The exact expectation of each scorer for ``question`` asked with instruction ``text``.

    The role answers the question it takes ``question`` for (:meth:`World.resolved`: another one
    with the same text and options, on a synthetic benchmark), writing that one's letters and option
    texts; each scorer reads the reply against ``question``, as the harness does.
    """
    asked = world.resolved(question)
    p = world.p_intended(asked, text)
    weights = world.config.agent.plain_shapes
    total = sum(weights.values())
    wrong = [x for x in asked.letters if x != asked.answer]
    sums = [0.0] * 5
    for shape, weight in weights.items():
        right = _reads(question, render_plain(asked, asked.answer, shape))
        others = [_reads(question, render_plain(asked, x, shape)) for x in wrong]
        for k in range(5):
            miss = sum(o[k] for o in others) / len(others) if others else 0.0
            sums[k] += weight / total * (p * right[k] + (1 - p) * miss)
    return PlainExpectation(*sums)


class PlainRole:
    """Answers plain requests about the world's questions."""

    def __init__(self, world: World) -> None:
        self.world = world

    def respond(self, body: dict[str, Any], question: Question) -> Reply:
        text = instruction_text(body)
        key = (
            self.world.config.seed,
            "plain",
            question.question_id,
            digest(text),
            draw_index(body),
            body.get("temperature"),
            body.get("seed"),
        )
        correct = uniform(*key, "correct") < self.world.p_intended(question, text)
        others = [x for x in question.letters if x != question.answer] or list(question.letters)
        letter = question.answer if correct else rng_for(*key, "letter").choice(others)
        shapes = list(self.world.config.agent.plain_shapes.items())
        content = render_plain(question, letter, weighted_choice(shapes, uniform(*key, "shape")))
        return Reply(content, (), "stop", prompt_tokens(body), estimate_tokens(content))
