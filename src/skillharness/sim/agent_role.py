"""The agent role: a tool-using episode per (question, instruction text, sample).

Every turn of an episode re-derives the same plan and the same final answer from a draw keyed
on: the seed, the question, the instruction text (system + first user message + tool
descriptions), ``temperature``, the request ``seed`` and the draw index (``sample_idx`` only when
the request samples: temperature above 0 and no fixed seed; see
:func:`~skillharness.sim.prompt.draw_index`). The conversation so far only says how far along the
plan the episode is. So at temperature 0 one (question, instruction text) gives one output,
whatever the sample index and seed, as on a greedy real server; when sampling, accuracy over many
sample indices converges to :meth:`World.p_scored`. Temperature selects the draw but does not
change the probabilities. A sampling request with a seed couples the correctness of every
instruction text asked with that seed (:meth:`World.seed_coupled`, ``world.seed_coupling``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from skillharness.data.questions import OPTION_LETTERS, Question
from skillharness.llm.roles import TOOL_GET_FRAMES, TOOL_GET_SUBTITLES, TOOL_SUBMIT_ANSWER
from skillharness.sim.config import AnswerShape
from skillharness.sim.draw import digest, rng_for, uniform, weighted_choice
from skillharness.sim.prompt import (
    draw_index,
    first_user_text,
    instruction_text,
    prompt_tokens,
    sampling_seed,
    stated_duration,
)
from skillharness.sim.wire import Reply, ReplyToolCall, estimate_tokens
from skillharness.sim.world import World

__all__ = ["DURATION_SECONDS", "AgentDecision", "AgentRole", "render_answer"]

# Nominal video length per Video-MME duration label, for plausible tool arguments.
DURATION_SECONDS = {"short": 90.0, "medium": 600.0, "long": 2400.0}
NO_ANSWER_TEXT = "I cannot tell which option is right from what I have seen."


@dataclass(frozen=True)
class AgentDecision:
    """How one episode goes: its tool plan and its final answer."""

    plan: tuple[str, ...]  # tool names before submit_answer
    intended: str  # the letter the agent means
    correct: bool  # whether ``intended`` is the right letter
    shape: AnswerShape


def render_answer(letter: str, shape: AnswerShape, other: str) -> str | None:
    """``submit_answer`` arguments (JSON) for ``letter`` in ``shape``; None means no call at all."""
    values: dict[AnswerShape, Any] = {
        AnswerShape.PLAIN: letter,
        AnswerShape.PAREN: f"({letter.lower()})",
        AnswerShape.SENTENCE: f"The answer is {letter}.",
        AnswerShape.LIST: [letter],
        AnswerShape.TWO_LETTERS: ", ".join(sorted({letter, other})),
    }
    if shape is AnswerShape.NO_ANSWER:
        return None
    return json.dumps({"answer": values[shape]})


class AgentRole:
    """Answers agent requests for one :class:`World`."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.config = world.config

    def decide(self, body: dict[str, Any]) -> tuple[Question | None, AgentDecision]:
        """The episode's question and decision for request ``body``."""
        question, key = self._episode(body)
        offered = {(t.get("function") or {}).get("name") for t in body.get("tools") or []}
        text = instruction_text(body)
        return question, self._decision(key, question, text, offered, first_user_text(body))

    def _episode(self, body: dict[str, Any]) -> tuple[Question | None, tuple[Any, ...]]:
        """The question and the draw key shared by every turn of the episode."""
        user = first_user_text(body)
        question = self.world.find_question(user)
        key = (
            self.config.seed,
            "agent",
            question.question_id if question else digest(user),
            digest(instruction_text(body)),
            draw_index(body),
            body.get("temperature"),
            sampling_seed(body),
        )
        return question, key

    def _decision(
        self, key: tuple[Any, ...], question: Question | None, text: str, offered: set[Any], user: str
    ) -> AgentDecision:
        agent = self.config.agent
        plan: list[str] = []
        if TOOL_GET_FRAMES in offered:
            plan.append(TOOL_GET_FRAMES)
            if uniform(*key, "extra_frames") < agent.extra_frames_rate:
                plan.append(TOOL_GET_FRAMES)
        if TOOL_GET_SUBTITLES in offered and uniform(*key, "subtitles") < agent.subtitles_rate:
            plan.append(TOOL_GET_SUBTITLES)
        if question is not None:
            letters, answer = question.letters, question.answer
            # The seed's and the video's shared draws are keyed on the sample (index, temperature,
            # seed), not the text: two texts asked at one seed are coupled (common random numbers).
            own = self.world.seed_coupled(question, uniform(*key, "correct"), key[6], key[5])
            u = self.world.correct_draw(question, own, *key[4:])
            correct = u < self.world.p_intended(question, text)
        else:  # not one of ours: guess among the letters the prompt shows
            letters = _letters_shown(None, user)
            answer, correct = "", False
        rng = rng_for(*key, "letter")
        intended = answer if correct else rng.choice([x for x in letters if x != answer] or list(letters))
        shape = AnswerShape.PLAIN
        if uniform(*key, "awkward") < agent.awkward_rate:
            weights = [(s, w) for s, w in agent.awkward_shapes.items() if s != AnswerShape.PLAIN and w > 0]
            shape = weighted_choice(weights, uniform(*key, "shape"))
        return AgentDecision(tuple(plan), intended, correct, shape)

    def respond(self, body: dict[str, Any]) -> Reply:
        """The next turn of the episode ``body`` is in."""
        question, decision = self.decide(body)
        done = _tool_calls_made(body)
        forced = _forced_tool(body)
        # Tool-call ids and arguments vary per turn of the episode, never across identical inputs.
        key = (*self._episode(body)[1], "turn", len(body["messages"]))
        if (
            forced == "none"
            or (forced is None and done >= len(decision.plan))
            or forced == TOOL_SUBMIT_ANSWER
        ):
            letters = _letters_shown(question, first_user_text(body))
            return self._submit(body, decision, key, text_only=forced == "none", letters=letters)
        name = forced if forced in (TOOL_GET_FRAMES, TOOL_GET_SUBTITLES) else decision.plan[done]
        duration = _video_duration(first_user_text(body), question)
        arguments = _tool_arguments(name, duration, rng_for(*key, "args"))
        return self._call(body, name, arguments, key)

    def _submit(
        self,
        body: dict[str, Any],
        decision: AgentDecision,
        key: tuple[Any, ...],
        text_only: bool,
        letters: tuple[str, ...],
    ) -> Reply:
        other = rng_for(*key, "other").choice([x for x in letters if x != decision.intended])
        arguments = render_answer(decision.intended, decision.shape, other)
        if arguments is None or text_only:
            content = NO_ANSWER_TEXT if arguments is None else f"The answer is {decision.intended}."
            return Reply(content, (), "stop", prompt_tokens(body), estimate_tokens(content))
        return self._call(body, TOOL_SUBMIT_ANSWER, arguments, key)

    def _call(self, body: dict[str, Any], name: str, arguments: str, key: tuple[Any, ...]) -> Reply:
        call = ReplyToolCall(f"call_{digest(*key, name).hex()[:24]}", name, arguments)
        return Reply(None, (call,), "tool_calls", prompt_tokens(body), estimate_tokens(name + arguments))


def _letters_shown(question: Question | None, user: str) -> tuple[str, ...]:
    """The letters the agent may answer with: the question's own, so a 4-option question never
    gets an E; for a question not in the world, the letters its prompt lists (A-D if none)."""
    if question is not None:
        return question.letters
    return tuple(x for x in OPTION_LETTERS if f"\n{x}." in "\n" + user) or OPTION_LETTERS[:4]


def _tool_calls_made(body: dict[str, Any]) -> int:
    return sum(len(m.get("tool_calls") or []) for m in body["messages"] if m.get("role") == "assistant")


def _forced_tool(body: dict[str, Any]) -> str | None:
    """The tool ``tool_choice`` forces, ``"none"``, or None when the model may choose."""
    choice = body.get("tool_choice")
    if choice == "none":
        return "none"
    if isinstance(choice, dict):
        return (choice.get("function") or {}).get("name")
    return None


def _video_duration(user_text: str, question: Question | None) -> float:
    """Seconds of video: the prompt's "Video duration: 123.4s" if present, else from the label."""
    stated = stated_duration(user_text)
    if stated:
        return stated
    return DURATION_SECONDS.get(question.duration, 600.0) if question else 600.0


def _tool_arguments(name: str, duration: float, rng: Any) -> str:
    start = round(rng.uniform(0, duration * 0.7), 1)
    end = round(min(duration, start + rng.uniform(duration * 0.1, duration * 0.3)), 1)
    if name == TOOL_GET_FRAMES:
        return json.dumps({"start_s": start, "end_s": end, "count": rng.choice([4, 6, 8])})
    return json.dumps({"start_s": start, "end_s": end})
