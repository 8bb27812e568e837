"""The scored truth, part by part: each way an answer ends unscored, against the harness's own runs.

Every empirical figure here comes from the harness's agent loop and normalizer driven in-process
(:mod:`harness_support`), or from the plain role read by ``normalize_answer``; each must agree with
the oracle within a binomial bound, and each part must move the truth where the intended-letter
accuracy does not move.
"""

from __future__ import annotations

import math

import pytest
from harness_support import run_pool

from skillharness.agent import AgentConfig, PredictionStatus, normalize_answer
from skillharness.agent.protocols.prompts import lmms_eval_text
from skillharness.data.questions import Question
from skillharness.sim import SimConfig, decisive_world
from skillharness.sim.model import SimModel
from skillharness.sim.oracle import oracle_http
from skillharness.sim.world import AgentPath
from skillharness.skills import initial_bundle


def _question(
    n: int, answer: str, text: str | None = None, options: tuple[str, ...] | None = None
) -> Question:
    return Question(
        video_id=f"{n:03d}",
        duration="medium",
        videoID=f"st{n:03d}",
        question_id=f"{n:03d}-1",
        task_type="Counting Problem",
        question=text or f"How many lamps stand in room {n}?",
        options=options or tuple(f"{x}. {k + 2} lamps in {n}" for k, x in enumerate("ABCD")),
        answer=answer,
    )


def _twins() -> list[Question]:
    """Two videos asked the same question with the same options, right answers B and D."""
    first = _question(1, "B")
    return [first, _question(2, "D", first.question, first.options), _question(3, "C")]


def _within(observed: int, n: int, p: float) -> bool:
    return abs(observed - n * p) <= 4 * math.sqrt(n * p * (1 - p)) + 1


def _runs(model: SimModel, questions: list[Question], draws: int, **overrides: object) -> list:
    bundle = model.oracle.best_bundle(initial_bundle()).to_bundle()
    out = []
    for draw in range(draws):
        config = AgentConfig(sampling={"temperature": 0.7}, seed_salt=f"d{draw}", **overrides)
        out += run_pool(model, bundle, questions, config, f"d{draw}")
    return out


def test_a_question_read_as_its_twin_is_right_only_by_chance() -> None:
    questions = _twins()
    model = SimModel(decisive_world(4), questions)
    world, oracle = model.world, model.oracle
    assert world.resolved(questions[1]) == questions[0]
    assert world.resolved(questions[0]) == questions[0]
    best = oracle.best_bundle(initial_bundle())
    p = world.p_intended(questions[0], best.text_for("Counting Problem"))
    kept = world.letter_kept_share()
    assert oracle.question_accuracy(best, questions[1]) == pytest.approx((1 - p) / 3 * kept)
    assert oracle.question_accuracy(best, questions[0]) == pytest.approx(p * kept)
    runs = [r for r in _runs(model, questions[1:2], 400)]
    assert _within(
        sum(r.correct is True for r in runs), len(runs), oracle.question_accuracy(best, questions[1])
    )
    # The intended-letter accuracy speaks of the question itself: what its insights are worth.
    assert oracle.intended_accuracy(best, questions[1:2]) == pytest.approx(
        world.p_intended(questions[1], best.text_for("Counting Problem"))
    )


@pytest.mark.parametrize(
    ("overrides", "path"),
    [
        ({"max_steps": 1}, AgentPath(max_steps=1)),
        ({"max_steps": 2}, AgentPath(max_steps=2)),
        ({"max_steps": 3}, AgentPath(max_steps=3)),
        ({"max_steps": 2, "vision": False}, AgentPath(max_steps=2, frames=False)),
    ],
)
def test_a_plan_longer_than_the_step_limit_ends_unanswered(overrides: dict, path: AgentPath) -> None:
    questions = [_question(n, "ABCD"[n % 4]) for n in range(10, 16)]
    model = SimModel(decisive_world(5), questions)
    runs = _runs(model, questions, 60, **overrides)
    exhausted = sum(r.error_class == "StepBudgetExhausted" for r in runs)
    assert _within(exhausted, len(runs), 1 - model.world.plan_completion_share(path))
    best = model.oracle.best_bundle(initial_bundle())
    expected = model.oracle.expected_accuracy(best, questions, path)
    assert _within(sum(r.correct is True for r in runs), len(runs), expected)
    assert expected < model.oracle.intended_accuracy(best, questions) * model.world.letter_kept_share()


def test_with_every_turn_free_only_the_answer_shape_costs() -> None:
    questions = [_question(n, "ABCD"[n % 4]) for n in range(20, 26)]
    model = SimModel(decisive_world(6), questions)
    runs = _runs(model, questions, 60)
    assert model.world.plan_completion_share(AgentPath()) == 1.0
    parse = sum(r.status is PredictionStatus.PARSE_ERROR for r in runs)
    assert _within(parse, len(runs), 1 - model.world.letter_kept_share())
    assert {r.error_class for r in runs if r.error_class} == {"AnswerParseError"}


def test_the_plain_path_reads_a_twin_through_our_normalizer() -> None:
    questions = _twins()
    model = SimModel(SimConfig(seed=12), questions)
    twin = questions[1]
    prompt = lmms_eval_text(twin, None)
    samples, right = 1500, 0
    for sample in range(samples):
        body = {
            "model": "sim-vl",
            "messages": [{"role": "user", "content": [{"type": "text", "text": prompt}]}],
            "temperature": 0.7,
            "sample_idx": sample,
        }
        text = model.respond(body, None).content or ""
        right += normalize_answer(text, twin.letters, twin.options).letter == twin.answer
    expected = model.oracle.plain_accuracy(prompt, [twin])["ours"]
    assert _within(right, samples, expected)
    own = model.world.p_intended(twin, prompt)  # what the oracle said before twins were read
    assert expected < own / 2


def test_the_plain_path_scores_the_system_slot_without_tool_descriptions() -> None:
    questions = _twins()
    model = SimModel(SimConfig(seed=12), questions)
    best = model.oracle.best_bundle(initial_bundle())
    q = questions[2]
    with_bundle = AgentPath(tools=False)
    expected = model.oracle.plain_accuracy(best.text_for(q.task_type, with_bundle), [q])["ours"]
    assert model.oracle.question_accuracy(best, q, with_bundle) == pytest.approx(expected)
    bare = model.oracle.question_accuracy(best, q, AgentPath(tools=False, bundle_in_prompt=False))
    assert bare == pytest.approx(model.oracle.plain_accuracy("", [q])["ours"])
    assert bare < expected
    assert best.text_for(q.task_type, AgentPath(tools=False, bundle_in_prompt=False)) == ""


def test_the_oracle_route_takes_the_path_and_names_both_accuracies() -> None:
    questions = _twins()
    model = SimModel(decisive_world(3), questions)
    best = model.oracle.best_bundle(initial_bundle()).model_dump(mode="json")
    default = oracle_http(model.oracle, {"bundle": best})
    assert default["path"] == {
        "tools": True,
        "frames": True,
        "subtitles": True,
        "max_steps": 6,
        "bundle_in_prompt": True,
    }
    assert default["accuracy"] < default["intended_accuracy"]
    # One turn and get_frames offered: every plan needs a tool call first, so nothing is answered.
    one_turn = oracle_http(model.oracle, {"bundle": best, "path": {"max_steps": 1}})
    assert one_turn["accuracy"] == 0.0
    assert one_turn["intended_accuracy"] == default["intended_accuracy"]
    as_get = oracle_http(model.oracle, {"text": "", "path": '{"frames": false, "max_steps": 1}'})
    assert as_get["accuracy"] > 0
    with pytest.raises(ValueError, match="path"):
        oracle_http(model.oracle, {"bundle": best, "path": {"steps": 3}})
    with pytest.raises(ValueError, match="max_steps"):
        oracle_http(model.oracle, {"bundle": best, "path": {"max_steps": 0}})
