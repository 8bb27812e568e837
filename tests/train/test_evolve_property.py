"""Property: whatever the evolve and rank roles reply, the step returns a value and keeps the regions."""

from __future__ import annotations

import json
from typing import Any

import pytest
from evolve_support import Env, ScriptedModel, with_model
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from skillharness.llm.roles import TOOL_GET_FRAMES, Role
from skillharness.llm.types import ChatRequest
from skillharness.skills import Bundle, EditTarget, MomentumUpdate, SkillDocument
from skillharness.skills.markers import APPENDIX_MARKER, MARKER_LIKE, MOMENTUM_MARKER
from skillharness.train.evolve.prompts import target_text
from skillharness.train.evolve.proposer import evolve
from skillharness.train.state.records import Candidate, CasePack, Refused

CHOICES = {"only", "first", "rank", "rank_fallback"}
NASTY = [
    MOMENTUM_MARKER,
    APPENDIX_MARKER,
    "<!--skillharness:",
    "<!-- SKILLHARNESS : body -->",
    "<!--",
    " skillharness:",
    "\n",
    "\r\n",
    "",
    "é",
    "🙂",
    "\u202e",
    "\ud800",
    "\x00",
]


@pytest.fixture(scope="module")
def incumbent(env: Env) -> Bundle:
    return env.bundle.with_momentum(env.task_type, MomentumUpdate(text="- Keep in mind: look twice."))


def anchors(document: str) -> st.SearchStrategy[str]:
    """Anchors that occur zero, one or many times, in any region or across a marker."""
    lines = [line for line in document.split("\n") if line]
    size = len(document)
    span = st.tuples(st.integers(0, size), st.integers(0, 60)).map(lambda t: document[t[0] : t[0] + t[1]])
    return st.one_of(
        st.sampled_from(lines),
        span,
        st.sampled_from(NASTY),
        st.sampled_from(["-", "the", " ", "a"]),
        st.text(),
    )


def texts() -> st.SearchStrategy[str]:
    piece = st.one_of(st.text(max_size=40), st.sampled_from(NASTY))
    return st.one_of(
        st.lists(piece, max_size=4).map("".join), st.just("x" * 9000), st.just("\n- A new rule.")
    )


def edit_sets(document: str) -> st.SearchStrategy[dict[str, Any]]:
    edit = st.fixed_dictionaries(
        {
            "op": st.sampled_from(["insert_after", "insert_before", "replace", "delete", "bogus"]),
            "anchor": anchors(document),
            "text": texts(),
        }
    )
    return st.fixed_dictionaries(
        {
            "skill_update_mode": st.sampled_from(["patch", "rewrite", "other"]),
            "edits": st.lists(edit, max_size=10),
            "body": st.one_of(st.none(), texts()),
            "rationale": st.text(max_size=30),
        },
        optional={"extra": st.integers()},
    )


def plausible_edit_sets(document: str) -> st.SearchStrategy[dict[str, Any]]:
    """Schema-valid sets whose anchors are whole lines: many apply, some collide or cross regions."""
    lines = sorted({line for line in document.split("\n") if line.strip()})
    edit = st.fixed_dictionaries(
        {
            "op": st.sampled_from(["insert_after", "insert_before", "replace", "delete"]),
            "anchor": st.sampled_from(lines),
            "text": st.one_of(st.just("\n- A new rule."), st.text(max_size=30), st.sampled_from(NASTY)),
        }
    )
    patch = st.fixed_dictionaries(
        {
            "skill_update_mode": st.just("patch"),
            "edits": st.lists(edit, min_size=1, max_size=3),
            "body": st.none(),
            "rationale": st.just("r"),
        }
    )
    rewrite = st.fixed_dictionaries(
        {
            "skill_update_mode": st.just("rewrite"),
            "edits": st.just([]),
            "body": texts(),
            "rationale": st.just("r"),
        }
    )
    return st.one_of(patch, rewrite)


def replies(document: str) -> st.SearchStrategy[str | None]:
    as_json = st.one_of(
        edit_sets(document), plausible_edit_sets(document), plausible_edit_sets(document)
    ).map(lambda d: json.dumps(d, ensure_ascii=False))
    fenced = as_json.map(lambda t: f"Here you go:\n```json\n{t}\n```\nDone.")
    truncated = st.tuples(as_json, st.integers(0, 200)).map(lambda t: t[0][: t[1]])
    return st.one_of(as_json, as_json, fenced, truncated, st.text(max_size=80), st.none())


RANK_REPLIES = st.one_of(
    st.none(),
    st.text(max_size=40),
    st.integers(-3, 6).map(lambda c: json.dumps({"choice": c, "reason": "best"})),
)


def assert_only_the_target_changed(before: Bundle, after: Bundle, target: EditTarget) -> None:
    """Everything outside the target's editable text is byte-identical, markers included."""
    if target.kind == "skill":
        old, new = before.skill(target.name or ""), after.skill(target.name or "")
        assert new.render()[len(new.body) :] == old.render()[len(old.body) :]
        assert not MARKER_LIKE.search(new.body)
        assert new.render().count(MOMENTUM_MARKER) == 1
        assert new.render().count(APPENDIX_MARKER) == 1
        others = [s for s in before.skills if s != target.name]
    else:
        assert dict(after.skills) == dict(before.skills)
        others = list(before.skills)
    assert all(after.skills[s].render() == before.skills[s].render() for s in others)
    if target.kind != "system":
        assert after.system_prompt == before.system_prompt
    kept_tools = [t for t in before.tools if target.kind != "tools" or t != target.name]
    assert all(after.tools[t] == before.tools[t] for t in kept_tools)


TARGETS = st.sampled_from(["skill", "system", "tools"])


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), kind=TARGETS, rank_reply=RANK_REPLIES)
def test_arbitrary_evolve_replies_give_a_value_and_keep_every_region(
    env: Env, incumbent: Bundle, data: st.DataObject, kind: str, rank_reply: str | None
) -> None:
    target = {
        "skill": EditTarget.skill(env.task_type),
        "system": EditTarget.system(),
        "tools": EditTarget.tool(TOOL_GET_FRAMES),
    }[kind]
    document = target_text(incumbent, target)
    sent = data.draw(st.lists(replies(document), min_size=3, max_size=3), label="evolve replies")

    def evolve_reply(request: ChatRequest) -> str | None:
        return sent[request.sample_idx]

    model = ScriptedModel(env.ctx.caller.model, {Role.EVOLVE: evolve_reply, Role.RANK: lambda _r: rank_reply})
    pack = CasePack(target=target, cases=env.pack.cases)
    result = env.runner.run(evolve(with_model(env.ctx, model), incumbent, pack, ()))

    assert isinstance(result, Candidate | Refused)
    assert result.target == target
    assert result.document_before == document
    if isinstance(result, Refused):
        assert result.reason
        event(f"refused: {result.reason}")
        return
    event(f"candidate: {kind}, {result.choice}")
    assert result.choice in CHOICES
    assert result.document_after == target_text(result.bundle, target)
    assert result.document_after != document
    assert_only_the_target_changed(incumbent, result.bundle, target)
    if target.kind == "skill":  # the stored text parses back to exactly the candidate's document
        assert SkillDocument.parse(result.document_after) == result.bundle.skill(env.task_type)
