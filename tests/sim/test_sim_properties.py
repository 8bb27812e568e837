"""Properties: evolve proposals always apply cleanly; presence is insensitive to case and markup."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st
from sim_support import make_questions

from skillharness.llm.roles import DOCUMENT_CLOSE, DOCUMENT_OPEN, Role, response_format
from skillharness.sim import Oracle, SimConfig
from skillharness.sim.config import EvolveConfig
from skillharness.sim.insights import HARMFUL_RULES, INSIGHT_BANK, USELESS_RULES
from skillharness.sim.model import SimModel
from skillharness.skills.document import SkillDocument
from skillharness.skills.edits import EditSet, parse_edit_set
from skillharness.skills.markers import APPENDIX_MARKER, MOMENTUM_MARKER
from skillharness.skills.patch import apply_edit_set

QUESTIONS = make_questions(4)
MODEL = SimModel(
    SimConfig(seed=3, evolve=EvolveConfig(insight_rate=0.5, harmful_rate=0.3, edits_per_call=3)), QUESTIONS
)
LINES = st.sampled_from(
    [
        "# Skill",
        "",
        "- Look at the frames.",
        "Look",
        "- Look at the frames. Again.",
        "text",
        *(f"- {w[0]}" for w in HARMFUL_RULES),
        *(f"- {w[1]}" for w in INSIGHT_BANK["Counting Problem"]),
        *USELESS_RULES,
    ]
)


@settings(max_examples=150, deadline=None)
@given(
    body=st.lists(LINES, max_size=8),
    momentum=st.lists(LINES, max_size=2),
    case=st.integers(0, 15),
    sample_idx=st.integers(0, 1000),
)
def test_evolve_proposals_always_apply_and_leave_other_regions_alone(body, momentum, case, sample_idx):
    body_text = "\n".join(body) + ("\n" if body else "")
    momentum_text = "\n".join(momentum) + ("\n" if momentum else "")
    document = f"{body_text}{MOMENTUM_MARKER}\n{momentum_text}{APPENDIX_MARKER}\nFixed appendix.\n"
    q = QUESTIONS[case]
    text = f"{q.question}\n" + "\n".join(q.options) + f"\n{DOCUMENT_OPEN}\n{document}\n{DOCUMENT_CLOSE}"
    body_json = {
        "model": "sim-vl",
        "messages": [{"role": "user", "content": text}],
        "response_format": response_format(Role.EVOLVE),
        "sample_idx": sample_idx,
    }
    proposal = json.loads(MODEL.respond(body_json, Role.EVOLVE).content)
    edit_set = parse_edit_set(proposal)
    assert isinstance(edit_set, EditSet), edit_set
    before = SkillDocument.parse(document)
    after = apply_edit_set(before, edit_set)
    assert isinstance(after, SkillDocument), (proposal, after)
    rendered = after.render()
    assert rendered.endswith(f"{MOMENTUM_MARKER}\n{momentum_text}{APPENDIX_MARKER}\nFixed appendix.\n")


@settings(max_examples=200, deadline=None)
@given(
    index=st.integers(0, 2),
    wording=st.integers(0, 2),
    upper=st.booleans(),
    sep=st.sampled_from([" ", "  ", "\n", " \n- ", "** ", " _"]),
)
def test_presence_ignores_case_spacing_and_markup(index, wording, upper, sep):
    q = QUESTIONS[0]
    oracle = Oracle(MODEL.world)
    rule = MODEL.world.insights_for(q.task_type)[index]
    text = rule.wordings[wording]
    mangled = sep.join(text.split(" "))
    mangled = mangled.upper() if upper else mangled
    assert oracle.question_accuracy(mangled, q) == oracle.question_accuracy(rule.canonical, q)
