"""Role detection by schema name, and the judge, evolve, rank, momentum and consolidate roles."""

from __future__ import annotations

import json

import pytest
from sim_support import SIM_TEST_WORLD

from skillharness.llm.roles import (
    DOCUMENT_CLOSE,
    DOCUMENT_OPEN,
    RANK_CANDIDATE_HEADING,
    RANK_DECLINE_OFFER,
    RANK_NONE,
    SCHEMA_NAMES,
    Role,
    response_format,
)
from skillharness.sim import Oracle, SimConfig
from skillharness.sim.config import EvolveConfig, JudgeConfig, WorldConfig
from skillharness.sim.insights import normalize_text
from skillharness.sim.model import SimModel
from skillharness.skills.document import SkillDocument
from skillharness.skills.edits import EditSet, parse_edit_set
from skillharness.skills.markers import APPENDIX_MARKER, MOMENTUM_MARKER
from skillharness.skills.patch import apply_edit_set

pytestmark = pytest.mark.sim_world(SIM_TEST_WORLD, questions="questions")

BODY = "# Counting Problem\n\nQuestions that ask how many.\n\n- Look at the frames.\n"
DOC = f"{BODY}{MOMENTUM_MARKER}\n{APPENDIX_MARKER}\n## Answer format (fixed)\n- Submit one letter.\n"


def _case_text(question, document=DOC) -> str:
    return (
        f"A failed case.\nQuestion: {question.question}\nOptions:\n"
        + "\n".join(question.options)
        + f"\nAgent answered: X\n{DOCUMENT_OPEN}\n{document}\n{DOCUMENT_CLOSE}\n"
    )


def _ask(
    model: SimModel, role: Role, text: str, sample_idx: int = 0, temperature: float | None = None
) -> dict:
    body = {
        "model": "sim-vl",
        "messages": [{"role": "user", "content": text}],
        "response_format": response_format(role),
        "sample_idx": sample_idx,
    }
    if temperature is not None:
        body["temperature"] = temperature
    from skillharness.llm.roles import role_of_request

    assert role_of_request(body) is role
    return json.loads(model.respond(body, role).content)


def test_roles_are_told_apart_by_schema_name_over_http(client, sim):
    for role, name in SCHEMA_NAMES.items():
        fmt = {"type": "json_schema", "json_schema": {"name": name, "schema": {"type": "object"}}}
        client.chat.completions.create(
            model=sim.model_name, messages=[{"role": "user", "content": "x"}], response_format=fmt
        )
        assert sim.stats()["roles"][role.value] == 1
    fmt = {"type": "json_schema", "json_schema": {"name": "something_else", "schema": {"type": "object"}}}
    response = client.chat.completions.create(
        model=sim.model_name, messages=[{"role": "user", "content": "x"}], response_format=fmt
    )
    assert "simulator" in response.choices[0].message.content
    assert sim.stats()["roles"]["none"] == 1


def _counting_question(questions):
    return next(q for q in questions if q.task_type == "Counting Problem")


def test_judge_says_defect_when_a_needed_insight_is_missing_and_lapse_otherwise(questions):
    model = SimModel(SimConfig(seed=2, judge=JudgeConfig(noise=0.0, uncertain_rate=0.0)), questions)
    q = _counting_question(questions)
    assert _ask(model, Role.JUDGE, _case_text(q))["verdict"] == "defect"
    full = BODY + "".join(f"- {r.wordings[2]}\n" for r in model.world.insights_for(q.task_type))
    assert (
        _ask(model, Role.JUDGE, _case_text(q, full + f"{MOMENTUM_MARKER}\n{APPENDIX_MARKER}\n"))["verdict"]
        == "lapse"
    )
    assert _ask(model, Role.JUDGE, "no question here")["verdict"] == "uncertain"


def test_judge_noise_and_uncertain_rates(questions):
    q = _counting_question(questions)
    flipped = SimModel(SimConfig(seed=2, judge=JudgeConfig(noise=1.0, uncertain_rate=0.0)), questions)
    assert _ask(flipped, Role.JUDGE, _case_text(q))["verdict"] == "lapse"
    unsure = SimModel(SimConfig(seed=2, judge=JudgeConfig(noise=0.0, uncertain_rate=1.0)), questions)
    assert _ask(unsure, Role.JUDGE, _case_text(q))["verdict"] == "uncertain"
    noisy = SimModel(SimConfig(seed=2, judge=JudgeConfig(noise=0.3, uncertain_rate=0.1)), questions)
    verdicts = [_ask(noisy, Role.JUDGE, _case_text(q), s)["verdict"] for s in range(300)]
    assert 0.6 * 300 < verdicts.count("defect") < 0.8 * 300
    assert 10 < verdicts.count("uncertain") < 60


def _apply(document: str, proposal: dict) -> str:
    edit_set = parse_edit_set(proposal)
    assert isinstance(edit_set, EditSet), edit_set
    result = apply_edit_set(SkillDocument.parse(document), edit_set)
    assert isinstance(result, SkillDocument), result
    return result.render()


@pytest.mark.parametrize(("rates", "sign"), [((1.0, 0.0), 1), ((0.0, 1.0), -1), ((0.0, 0.0), 0)])
def test_evolve_edits_apply_cleanly_and_have_the_intended_true_effect(questions, rates, sign):
    # Filler is worth exactly nothing only with no spread (test_sim_honest_world checks the default's).
    config = SimConfig(
        seed=4,
        world=WorldConfig(filler_effect_sd=0.0),
        evolve=EvolveConfig(insight_rate=rates[0], harmful_rate=rates[1]),
    )
    model = SimModel(config, questions)
    oracle = Oracle(model.world)
    cases = [q for q in questions if q.task_type == "Counting Problem"][:3]
    text = "".join(_case_text(q, DOC) for q in cases[:-1]) + _case_text(cases[-1])
    for sample_idx in range(5):
        proposal = _ask(model, Role.EVOLVE, text, sample_idx)
        after = _apply(DOC, proposal)
        effect = oracle.edit_effect(
            {"skills": {"Counting Problem": DOC}}, {"skills": {"Counting Problem": after}}, cases
        )
        assert (effect.delta > 0) - (effect.delta < 0) == sign, (proposal, effect)


def test_evolve_deletes_a_harmful_line_and_rewrites_an_empty_body(questions):
    model = SimModel(SimConfig(seed=4, evolve=EvolveConfig(insight_rate=1.0, harmful_rate=0.0)), questions)
    q = _counting_question(questions)
    all_insights = "".join(f"- {r.canonical}\n" for r in model.world.insights_for(q.task_type))
    doc = BODY + all_insights + "- When unsure, pick A.\n" + f"{MOMENTUM_MARKER}\n{APPENDIX_MARKER}\n"
    proposal = _ask(model, Role.EVOLVE, _case_text(q, doc))
    assert proposal["edits"][0]["op"] == "delete"
    assert "pick A" not in _apply(doc, proposal)
    empty = f"{MOMENTUM_MARKER}\n{APPENDIX_MARKER}\n"
    rewrite = _ask(model, Role.EVOLVE, _case_text(q, empty))
    assert rewrite["skill_update_mode"] == "rewrite"
    assert rewrite["body"]


def test_rank_prefers_the_candidate_with_a_real_insight(questions):
    model = SimModel(SimConfig(seed=1, evolve=EvolveConfig(rank_informativeness=1.0)), questions)
    q = _counting_question(questions)
    good = model.world.insights_for(q.task_type)[0].wordings[1]
    text = "\n".join(
        [
            RANK_CANDIDATE_HEADING.format(index=0),
            "- Prefer the longest option.",
            RANK_CANDIDATE_HEADING.format(index=1),
            "- Think step by step.",
            RANK_CANDIDATE_HEADING.format(index=2),
            f"- {good}",
        ]
    )
    assert _ask(model, Role.RANK, text)["choice"] == 2
    assert _ask(model, Role.RANK, "no candidates at all")["choice"] == 0


@pytest.mark.parametrize("informativeness", [1.0, 0.0])
def test_rank_declines_only_when_offered_and_no_candidate_states_an_insight(questions, informativeness):
    model = SimModel(SimConfig(seed=1, evolve=EvolveConfig(rank_informativeness=informativeness)), questions)
    good = model.world.insights_for(_counting_question(questions).task_type)[0].canonical
    heading = RANK_CANDIDATE_HEADING.format

    def choices(*candidates: str, offer: bool = True) -> set[int]:
        text = "\n".join(f"{heading(index=i)}\n- {c}" for i, c in enumerate(candidates))
        text += f"\n{RANK_DECLINE_OFFER}." if offer else ""
        return {_ask(model, Role.RANK, text, sample_idx=i, temperature=1.0)["choice"] for i in range(40)}

    if informativeness == 1.0:
        assert choices("Think step by step.", "Prefer the longest option.") == {RANK_NONE}
        assert choices("Double-check your work.") == {RANK_NONE}
        assert choices("Think step by step.", good) == {1}
        assert choices("Think step by step.", "Prefer the longest option.", offer=False) == {0}
    else:  # at chance, declining is one more option drawn like the others
        assert choices("Think step by step.", good) == {0, 1, RANK_NONE}
        assert choices("Think step by step.", good, offer=False) == {0, 1}


def test_momentum_restates_only_what_the_body_holds_and_plainly_changes_nothing(questions):
    """With every restatement in the plain form (the clear and muddled rates 0), momentum is
    accuracy-neutral, as it always was before those forms; test_sim_honest_world checks the default."""
    plain = EvolveConfig(momentum_clear_rate=0.0, momentum_muddled_rate=0.0)
    model = SimModel(SimConfig(seed=1, evolve=plain), questions)
    q = _counting_question(questions)
    rule = model.world.insights_for(q.task_type)[1]
    doc = BODY + f"- {rule.canonical}\n{MOMENTUM_MARKER}\n{APPENDIX_MARKER}\n"
    guidance = _ask(model, Role.MOMENTUM, _case_text(q, doc))["guidance"]
    assert guidance.startswith("- Keep in mind: ")
    assert rule.present_in(normalize_text(guidance))
    assert MOMENTUM_MARKER not in guidance
    oracle = Oracle(model.world)
    before = oracle.expected_accuracy({"skills": {q.task_type: doc}}, [q])
    after = oracle.expected_accuracy({"skills": {q.task_type: doc + guidance}}, [q])
    assert after == before


def test_consolidate_removes_repeated_lines(questions):
    model = SimModel(SimConfig(seed=1, evolve=EvolveConfig(consolidate_drop_rate=0.0)), questions)
    system = "Be a careful analyst.\n- Think step by step.\n- Think step by step.\n\n\n\nSubmit one letter."
    out = _ask(model, Role.CONSOLIDATE, f"{DOCUMENT_OPEN}\n{system}\n{DOCUMENT_CLOSE}")["system_prompt"]
    assert out.count("Think step by step.") == 1
    assert "Submit one letter." in out
    assert "\n\n\n" not in out


def test_7e_at_temperature_0_a_role_answers_alike_whatever_the_sample_index(questions):
    """A real server never sees ``sample_idx``: at temperature 0 its reply depends on the request only."""
    config = SimConfig(seed=4, judge=JudgeConfig(noise=0.5, uncertain_rate=0.2))
    model = SimModel(config, questions)
    cases = [q for q in questions if q.task_type == "Counting Problem"][:3]
    text = "".join(_case_text(q) for q in cases)
    for role in (Role.JUDGE, Role.EVOLVE, Role.MOMENTUM, Role.CONSOLIDATE):
        greedy = [_ask(model, role, text, s, temperature=0.0) for s in range(6)]
        assert all(reply == greedy[0] for reply in greedy), role
    # Sampling, the sample index stands in for a server's fresh randomness: candidates differ.
    sampled = [json.dumps(_ask(model, Role.EVOLVE, text, s, temperature=0.7)) for s in range(6)]
    assert len(set(sampled)) > 1
