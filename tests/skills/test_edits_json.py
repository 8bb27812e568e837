"""The edit models agree with the evolve JSON schema; bad LLM output is a refusal, never a raise."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillharness.llm.roles import RESPONSE_SCHEMAS, Role
from skillharness.skills import Edit, EditOp, EditSet, Refusal, RefusalReason, parse_edit_set

SCHEMA = RESPONSE_SCHEMAS[Role.EVOLVE]
EDIT_SCHEMA = SCHEMA["properties"]["edits"]["items"]
GOOD = {
    "skill_update_mode": "patch",
    "edits": [{"op": "replace", "anchor": "Read the text.", "text": "Read every glyph."}],
    "body": None,
    "rationale": "OCR answers failed on look-alike glyphs.",
}


def test_op_enum_and_fields_match_the_schema() -> None:
    assert [op.value for op in EditOp] == EDIT_SCHEMA["properties"]["op"]["enum"]
    assert set(Edit.model_fields) == set(EDIT_SCHEMA["properties"])
    assert set(EditSet.model_fields) == set(SCHEMA["properties"])
    ours = EditSet.model_json_schema()
    assert set(ours["required"]) == set(SCHEMA["required"])
    assert set(ours["$defs"]["Edit"]["required"]) == set(EDIT_SCHEMA["required"])
    assert SCHEMA["additionalProperties"] is False
    assert EDIT_SCHEMA["additionalProperties"] is False
    modes = ours["properties"]["skill_update_mode"]["enum"]
    assert modes == SCHEMA["properties"]["skill_update_mode"]["enum"]


def _schema_valid(obj: Any) -> bool:
    """A tiny validator for exactly the evolve schema's keywords (type/enum/required/additional)."""
    if (
        not isinstance(obj, dict)
        or set(obj) - set(SCHEMA["properties"])
        or set(SCHEMA["required"]) - set(obj)
    ):
        return False
    if obj["skill_update_mode"] not in ("patch", "rewrite") or not isinstance(obj["rationale"], str):
        return False
    if "body" in obj and obj["body"] is not None and not isinstance(obj["body"], str):
        return False
    if not isinstance(obj["edits"], list):
        return False
    for edit in obj["edits"]:
        if not isinstance(edit, dict) or set(edit) != set(EDIT_SCHEMA["required"]):
            return False
        if edit["op"] not in EDIT_SCHEMA["properties"]["op"]["enum"]:
            return False
        if not (isinstance(edit["anchor"], str) and isinstance(edit["text"], str)):
            return False
    return True


_scalar = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(allow_nan=False),
    st.text(max_size=5),
    st.sampled_from(["patch", "rewrite", "replace", "delete", "insert_after"]),
)
_edit_like = st.dictionaries(st.sampled_from(["op", "anchor", "text", "extra"]), _scalar, max_size=4)
_evolve_like = st.dictionaries(
    st.sampled_from(["skill_update_mode", "edits", "body", "rationale", "extra"]),
    st.one_of(_scalar, st.lists(st.one_of(_edit_like, _scalar), max_size=3)),
    max_size=5,
)


@settings(max_examples=200, deadline=None)
@given(obj=st.one_of(_evolve_like, st.builds(lambda extra: {**GOOD, **extra}, _evolve_like)))
def test_models_and_schema_accept_the_same_documents(obj: dict[str, Any]) -> None:
    parsed = parse_edit_set(json.dumps(obj))
    assert isinstance(parsed, EditSet) == _schema_valid(obj), (obj, parsed)
    if isinstance(parsed, Refusal):
        assert parsed.reason is RefusalReason.MALFORMED_EDIT


def test_good_document_parses_in_every_wrapping() -> None:
    text = json.dumps(GOOD)
    for raw in (
        text,
        f"```json\n{text}\n```",
        f"```\n{text}```",
        f"Here you go:\n{text}\nThanks",
        text.encode(),
        GOOD,
    ):
        parsed = parse_edit_set(raw)
        assert isinstance(parsed, EditSet), raw
        assert parsed.edits[0].op is EditOp.REPLACE
    assert EditSet.model_validate_json(parsed.model_dump_json()) == parsed  # survives the manifest


@pytest.mark.parametrize(
    ("raw", "reason", "where"),
    [
        ("", RefusalReason.MALFORMED_JSON, ""),
        ("not json at all", RefusalReason.MALFORMED_JSON, ""),
        ('{"skill_update_mode": "patch", "edits": [', RefusalReason.MALFORMED_JSON, ""),
        ("```json\n{broken}\n```", RefusalReason.MALFORMED_JSON, ""),
        (b"\xff\xfe{", RefusalReason.MALFORMED_JSON, ""),
        ("[1, 2]", RefusalReason.MALFORMED_EDIT, ""),
        ('"just a string"', RefusalReason.MALFORMED_EDIT, ""),
        ("null", RefusalReason.MALFORMED_EDIT, ""),
        (
            json.dumps({**GOOD, "skill_update_mode": "append"}),
            RefusalReason.MALFORMED_EDIT,
            "skill_update_mode",
        ),
        (
            json.dumps({k: v for k, v in GOOD.items() if k != "rationale"}),
            RefusalReason.MALFORMED_EDIT,
            "rationale",
        ),
        (json.dumps({**GOOD, "appendix": "x"}), RefusalReason.MALFORMED_EDIT, "appendix"),
        (json.dumps({**GOOD, "edits": {"op": "replace"}}), RefusalReason.MALFORMED_EDIT, "edits"),
        (
            json.dumps({**GOOD, "edits": [{"op": "append", "anchor": "a", "text": "b"}]}),
            RefusalReason.MALFORMED_EDIT,
            "edits.0.op",
        ),
        (
            json.dumps({**GOOD, "edits": [{"op": "delete", "anchor": "a"}]}),
            RefusalReason.MALFORMED_EDIT,
            "edits.0.text",
        ),
        (
            json.dumps({**GOOD, "edits": [{"op": "delete", "anchor": 3, "text": ""}]}),
            RefusalReason.MALFORMED_EDIT,
            "edits.0.anchor",
        ),
        (json.dumps({**GOOD, "body": 5}), RefusalReason.MALFORMED_EDIT, "body"),
        (json.dumps({**GOOD, "rationale": ["a"]}), RefusalReason.MALFORMED_EDIT, "rationale"),
        ('{"a": NaN}', RefusalReason.MALFORMED_EDIT, ""),
        ("[" * 5000, RefusalReason.MALFORMED_JSON, ""),
    ],
)
def test_malformed_llm_json_is_a_refusal(raw: str | bytes, reason: RefusalReason, where: str) -> None:
    parsed = parse_edit_set(raw)
    assert isinstance(parsed, Refusal), parsed
    assert parsed.reason is reason, parsed
    assert where in parsed.detail
    if where.startswith("edits.0."):
        assert parsed.edit_index == 0
