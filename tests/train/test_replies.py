"""Typed role replies: each model agrees with its role's named JSON schema, and no parser raises."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from skillharness.llm.roles import RESPONSE_SCHEMAS, Role
from skillharness.skills import EditSet, Refusal, parse_edit_set
from skillharness.train.roles.replies import (
    ConsolidateReply,
    JudgeReply,
    MomentumReply,
    RankReply,
    ReplyRefusal,
    parse_reply,
)

_MODELS = {
    Role.JUDGE: JudgeReply,
    Role.RANK: RankReply,
    Role.MOMENTUM: MomentumReply,
    Role.CONSOLIDATE: ConsolidateReply,
    Role.EVOLVE: EditSet,
}


def _shape(schema: dict[str, object]) -> dict[str, object]:
    """Field names, required names and enums of a JSON schema object, for comparison."""
    props = schema["properties"]
    assert isinstance(props, dict)
    return {
        "fields": sorted(props),
        "required": sorted(schema.get("required", [])),  # type: ignore[arg-type]
        "enums": {k: sorted(v["enum"]) for k, v in props.items() if isinstance(v, dict) and "enum" in v},
    }


def test_every_role_reply_model_agrees_with_its_named_schema() -> None:
    assert set(_MODELS) == set(RESPONSE_SCHEMAS)
    for role, model in _MODELS.items():
        wire = _shape(RESPONSE_SCHEMAS[role])
        typed = _shape(model.model_json_schema())
        assert typed["fields"] == wire["fields"], role
        assert set(wire["required"]) <= set(typed["fields"]), role
        for name, values in wire["enums"].items():
            options = model.model_json_schema()["properties"][name]
            found = options.get("enum") or [
                x for alt in options.get("anyOf", []) for x in alt.get("enum", [])
            ]
            assert sorted(found) == values, (role, name)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=12,
)
_TEXT = st.one_of(
    st.text(max_size=200),
    _JSON.map(lambda v: json.dumps(v, allow_nan=True)),
    _JSON.map(lambda v: "```json\n" + json.dumps(v) + "\n```"),
    st.builds(lambda v, junk: junk + json.dumps(v) + junk, _JSON, st.text(max_size=10)),
)


@settings(max_examples=300, deadline=None)
@given(_TEXT)
def test_no_role_parser_raises_on_any_output(raw: str) -> None:
    for model in (JudgeReply, RankReply, MomentumReply, ConsolidateReply):
        result = parse_reply(model, raw)
        assert isinstance(result, model | ReplyRefusal)
    assert isinstance(parse_edit_set(raw), EditSet | Refusal)


def test_a_valid_reply_parses_and_a_wrong_enum_is_refused_with_the_field() -> None:
    ok = parse_reply(JudgeReply, '{"verdict": "defect", "target": "skill", "reason": "r"}')
    assert isinstance(ok, JudgeReply)
    bad = parse_reply(JudgeReply, '{"verdict": "maybe", "target": "skill", "reason": "r"}')
    assert isinstance(bad, ReplyRefusal)
    assert "verdict" in bad.detail
    assert isinstance(parse_reply(RankReply, None), ReplyRefusal)
