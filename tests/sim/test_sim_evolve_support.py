"""The simulated evolve role states a missing insight as often as the shown cases call for it."""

from __future__ import annotations

import json

import pytest
from sim_support import make_questions

from skillharness.data.questions import Question
from skillharness.llm.roles import Role, response_format
from skillharness.sim import SimConfig
from skillharness.sim.config import EvolveConfig
from skillharness.sim.evolve_role import pack_support, useful_rate
from skillharness.sim.insights import normalize_text
from skillharness.sim.model import SimModel
from skillharness.skills.markers import APPENDIX_MARKER, MOMENTUM_MARKER
from skillharness.train.roles.prompt_specs import TEMPLATE_SPECS, CaseView, EditSetView
from skillharness.train.roles.templates import load_templates

TASK = "Counting Problem"
PACK = 8
SAMPLES = 300


_QUESTIONS = make_questions(per_task=40)


@pytest.fixture(scope="module")
def model() -> SimModel:
    # Independent samples (sample_alike 0): a rate is estimated from 300 draws. With alike samples
    # each reply's chance is the same, but half the draws would be one shared reply.
    return SimModel(SimConfig(seed=4, evolve=EvolveConfig(sample_alike=0.0)), _QUESTIONS)


def _document(model: SimModel) -> str:
    """A skill whose body holds the task's first two insights: questions needing only those are lapses."""
    first_two = "".join(f"- {r.canonical}\n" for r in model.world.insights_for(TASK)[:2])
    body = f"# {TASK}\n\nQuestions that ask how many.\n\n- Look at the frames.\n{first_two}"
    return f"{body}{MOMENTUM_MARKER}\n{APPENDIX_MARKER}\n## Answer format (fixed)\n- Submit one letter.\n"


def _split(model: SimModel, document: str) -> tuple[list[Question], list[Question]]:
    """(lapses: every needed insight present, defects: one is missing) among the task's questions."""
    questions = [q for q in model.world.questions.values() if q.task_type == TASK]
    defects = [q for q in questions if model.world.missing_insights(q, document)]
    lapses = [q for q in questions if not model.world.missing_insights(q, document)]
    assert len(defects) >= PACK, len(defects)
    assert len(lapses) >= PACK, len(lapses)
    return lapses, defects


def _view(question: Question) -> CaseView:
    return CaseView(
        question_id=question.question_id,
        task_type=question.task_type,
        question=question.question,
        options=question.options,
        correct_answer=question.answer,
        agent_answer="A" if question.answer != "A" else "B",
        duration_s=60.0,
        trace_summary="1. get_frames(0.0, 60.0, 8) -> 8 frames\n2. submit_answer(A)",
        judge_reason="The skill does not say how to approach this kind of question.",
    )


def _prompt(
    document: str, cases: list[Question], under_test: list[EditSetView] | None = None
) -> list[dict[str, str]]:
    """The evolve_skill prompt the training loop would send (the real template)."""
    variables = TEMPLATE_SPECS["evolve_skill"].sample()
    cases_shown = [_view(q) for q in cases]
    variables.update(
        task_type=TASK, document=document, cases=cases_shown, rejected=[], under_test=under_test or []
    )
    return list(load_templates().render("evolve_skill", **variables).messages())


def _useful_share(
    model: SimModel, document: str, cases: list[Question], under_test: list[EditSetView] | None = None
) -> float:
    """Share of sampled proposals that state an insight of the task the document lacked."""
    messages = _prompt(document, cases, under_test)
    lacking = [r for r in model.world.insights_for(TASK) if not r.present_in(normalize_text(document))]
    useful = 0
    for sample_idx in range(SAMPLES):
        body = {
            "model": "sim-vl",
            "messages": messages,
            "response_format": response_format(Role.EVOLVE),
            "temperature": 0.7,
            "sample_idx": sample_idx,
        }
        proposal = json.loads(model.respond(body, Role.EVOLVE).content)
        added = normalize_text(json.dumps(proposal["edits"]) + str(proposal["body"] or ""))
        useful += any(r.present_in(added) for r in lacking)
    return useful / SAMPLES


def test_i6_evolve_rate_rises_with_the_share_of_cases_that_need_a_missing_insight(model: SimModel) -> None:
    document = _document(model)
    lapses, defects = _split(model, document)
    packs = {
        "lapses": lapses[:PACK],
        "half": lapses[: PACK // 2] + defects[: PACK // 2],
        "defects": defects[:PACK],
    }
    supports = {name: pack_support(model.world, document, tuple(p)) for name, p in packs.items()}
    assert supports == {"lapses": 0.0, "half": 0.5, "defects": 1.0}
    shares = {name: _useful_share(model, document, p) for name, p in packs.items()}
    config = model.config.evolve
    # Expected 0.10, 0.30, 0.50 at the defaults; 300 draws give a standard error of at most 0.03.
    for name, share in shares.items():
        assert abs(share - useful_rate(config, supports[name])) < 0.09, shares
    assert shares["lapses"] < 0.2 < shares["half"] < 0.4 < shares["defects"], shares
    # A pack of genuine defects keeps the rate it had before the pack mattered.
    assert useful_rate(config, 1.0) == config.insight_rate


def test_i6_evolve_support_is_read_from_the_prompt_and_stays_deterministic_at_temperature_zero(
    model: SimModel,
) -> None:
    document = _document(model)
    lapses, defects = _split(model, document)
    messages = _prompt(document, defects[:PACK])
    base = {"model": "sim-vl", "messages": messages, "response_format": response_format(Role.EVOLVE)}
    greedy = {
        model.respond({**base, "temperature": 0.0, "sample_idx": i}, Role.EVOLVE).content for i in range(5)
    }
    assert len(greedy) == 1
    # Only the cases quoted in the prompt count: the same document with lapses quoted rarely helps.
    assert pack_support(model.world, document, model.world.index.find_all(messages[1]["content"])) == 1.0
    lapse_text = _prompt(document, lapses[:PACK])[1]["content"]
    assert pack_support(model.world, document, model.world.index.find_all(lapse_text)) == 0.0


def _listed(model: SimModel, document: str) -> tuple[list[Question], list[EditSetView]]:
    """A pack of defects, and an edit set under test that states the one insight the document lacks."""
    _, defects = _split(model, document)
    third = model.world.insights_for(TASK)[2]
    edits = {
        "skill_update_mode": "patch",
        "edits": [{"op": "insert_after", "anchor": "x", "text": f"\n- {third.canonical}"}],
    }
    listed = [
        EditSetView(rationale="open", edits_json=json.dumps({**edits, "body": None, "rationale": "open"}))
    ]
    assert "<under_test>" in _prompt(document, defects[:PACK], listed)[1]["content"]
    return defects[:PACK], listed


@pytest.mark.parametrize("compliance", [0.0, 1.0])
def test_lever4_a_proposer_repeats_an_open_insight_only_when_it_ignores_the_under_test_block(
    compliance: float,
) -> None:
    """The prompt lists the open tests' edit sets. A proposer that heeds the block (compliance 1)
    then states another insight (or filler) instead, never the open one; one that ignores it
    (compliance 0) repeats the open insight as often as with no block at all."""
    evolve = EvolveConfig(proposer_compliance=compliance, sample_alike=0.0)  # independent samples
    model = SimModel(SimConfig(seed=4, evolve=evolve), _QUESTIONS)
    document = _document(model)
    pack, listed = _listed(model, document)
    # A pack of defects: every useful draw states the third insight, the only one missing.
    no_block = useful_rate(model.config.evolve, 1.0)
    assert abs(_useful_share(model, document, pack) - no_block) < 0.09
    repeats = _useful_share(model, document, pack, listed)
    if compliance == 1.0:
        assert repeats == 0.0
    else:  # 300 draws at a share near 0.5: a standard error below 0.03
        assert abs(repeats - no_block) < 0.09, (repeats, no_block)


def test_lever4_at_the_default_compliance_a_share_of_proposals_repeat_the_open_insight(
    model: SimModel,
) -> None:
    """Repeats fall to (1 - proposer_compliance) of the no-block rate, not to zero."""
    document = _document(model)
    pack, listed = _listed(model, document)
    compliance = model.config.evolve.proposer_compliance
    assert 0 < compliance < 1
    expected = (1 - compliance) * useful_rate(model.config.evolve, 1.0)
    repeats = _useful_share(model, document, pack, listed)
    # 300 draws at a share near 0.15: a standard error of about 0.02.
    assert abs(repeats - expected) < 0.07, (repeats, expected)
    assert repeats > 0
