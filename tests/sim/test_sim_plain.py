"""Plain requests (no tools) about a known question get a text answer in real models' shapes,
and the oracle's expectation under each of the four scorers matches what they read."""

from __future__ import annotations

import math

import pytest

from skillharness.agent import lmms_eval_letter, normalize_answer, official_letter, vlmevalkit_letter
from skillharness.agent.protocols.prompts import lmms_eval_text
from skillharness.data.questions import Question
from skillharness.sim import PlainShape, SimConfig
from skillharness.sim.model import PLAIN_REPLY, SimModel
from skillharness.sim.plain import NO_LETTER_TEXT, render_plain


def _questions() -> list[Question]:
    # Option texts whose first capital is another letter: "Bananas" reads as B to the reference
    # extractor, whatever letter it is the text of.
    return [
        Question(
            video_id=f"v{i}",
            duration="short",
            videoID=f"vid{i}",
            question_id=f"v{i}-1",
            task_type="Object Recognition",
            question=f"Which fruit is on table number {i}?",
            options=("A. Bananas.", "B. Cherries.", "C. Dates.", "D. Apples."),
            answer="ABCD"[i % 4],
        )
        for i in range(4)
    ]


def _body(question: Question, sample: int, tools: bool = False, temperature: float = 0.0) -> dict:
    body = {
        "model": "sim-vl",
        "messages": [{"role": "user", "content": [{"type": "text", "text": lmms_eval_text(question, None)}]}],
        "temperature": temperature,
        "max_tokens": 16,
        "sample_idx": sample,
    }
    if tools:
        body["tools"] = [{"type": "function", "function": {"name": "lookup", "parameters": {}}}]
    return body


def test_shapes_and_how_each_scorer_reads_them() -> None:
    q = _questions()[0]
    assert [render_plain(q, "A", s) for s in PlainShape] == [
        "A",
        "A.",
        "The best answer is A",
        "Bananas",
        NO_LETTER_TEXT,
    ]
    assert normalize_answer("Bananas", q.letters, q.options).letter == "A"  # ours reads option text
    for read in (lmms_eval_letter, vlmevalkit_letter, official_letter):
        assert read("Bananas") == "B"  # the references read its capital
        assert read(NO_LETTER_TEXT) == ""
    assert normalize_answer(NO_LETTER_TEXT, q.letters, q.options).letter is None


def test_a_plain_request_gets_text_and_other_requests_do_not() -> None:
    model = SimModel(SimConfig(seed=5), _questions())
    q = _questions()[1]
    reply = model.respond(_body(q, 0), None)
    assert not reply.tool_calls
    assert reply.content in {render_plain(q, x, s) for x in q.letters for s in PlainShape}
    assert model.respond(_body(q, 0), None) == reply  # same input, same answer
    with_tools = model.respond(_body(q, 0, tools=True), None)
    assert with_tools.content == PLAIN_REPLY
    unknown = {"model": "sim-vl", "messages": [{"role": "user", "content": "hello"}]}
    assert model.respond(unknown, None).content == PLAIN_REPLY


def test_the_oracle_predicts_each_scorer() -> None:
    questions = _questions()
    config = SimConfig(seed=11)
    model = SimModel(config, questions)
    samples = 600
    ours = lmms = vlm = official_right = official_counted = 0
    for q in questions:
        for sample in range(samples):
            # Sampling: at temperature 0 every sample index would replay one reply.
            text = model.respond(_body(q, sample, temperature=0.7), None).content or ""
            ours += normalize_answer(text, q.letters, q.options).letter == q.answer
            lmms += lmms_eval_letter(text) == q.answer
            vlm += vlmevalkit_letter(text) == q.answer
            letter = official_letter(text)
            official_right += letter == q.answer
            official_counted += letter != ""
    n = samples * len(questions)
    texts = {q.question_id: lmms_eval_text(q, None) for q in questions}
    expected = model.oracle.plain_accuracy(texts, questions)
    observed = {
        "ours": ours / n,
        "lmms_eval": lmms / n,
        "vlmevalkit": vlm / n,
        "official": official_right / official_counted,
    }
    for name, value in observed.items():
        p = expected[name]
        assert value == pytest.approx(p, abs=4 * math.sqrt(p * (1 - p) / n) + 1e-9), name
    assert expected["official"] > expected["lmms_eval"]  # dropping unparsed answers flatters
    assert expected["ours"] != pytest.approx(expected["lmms_eval"], abs=1e-3)  # the parsers differ


def test_bundle_text_in_the_system_slot_moves_a_plain_answer() -> None:
    """Training from a reference protocol: the bundle text sent as a system message is what the
    world scores, as it scores the agent's."""
    questions = _questions()
    model = SimModel(SimConfig(seed=11), questions)
    best = model.oracle.best_bundle()
    bare = {q.question_id: lmms_eval_text(q, None) for q in questions}
    helped = {q.question_id: best.text_for(q.task_type) + "\n" + bare[q.question_id] for q in questions}
    assert (
        model.oracle.plain_accuracy(helped, questions)["ours"]
        > model.oracle.plain_accuracy(bare, questions)["ours"]
    )
    q = questions[0]
    body = _body(q, 0)
    body["messages"].insert(0, {"role": "system", "content": best.text_for(q.task_type)})
    assert model.respond(body, None).content in {render_plain(q, x, s) for x in q.letters for s in PlainShape}
