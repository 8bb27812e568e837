"""One rule for canonical JSON and content hashes, wherever a layer exposes it."""

from __future__ import annotations

import ast
import hashlib
import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skillharness.llm.cache.key import canonical_json as llm_canonical_json
from skillharness.skills import canonical_bytes as skills_canonical_bytes
from skillharness.skills import content_hash as skills_content_hash
from skillharness.store import content_hash as store_content_hash
from skillharness.util.canonical import canonical_bytes, canonical_json, content_hash
from skillharness.util.model import StrictModel

SRC = Path(__file__).resolve().parents[2] / "src" / "skillharness"

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)


def test_every_layer_exposes_the_same_functions() -> None:
    assert store_content_hash is content_hash
    assert skills_content_hash is content_hash
    assert skills_canonical_bytes is canonical_bytes
    assert llm_canonical_json is canonical_json


@given(json_values)
def test_hash_is_sha256_of_sorted_compact_utf8_json(value: Any) -> None:
    expected = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert canonical_json(value) == expected
    assert content_hash(value) == hashlib.sha256(expected.encode("utf-8")).hexdigest()
    assert json.loads(canonical_json(value)) == value


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_nan_and_infinities_are_refused_everywhere(bad: float) -> None:
    for fn in (canonical_json, canonical_bytes, content_hash):
        with pytest.raises(ValueError, match="not JSON compliant"):
            fn({"x": [1, bad]})


def test_a_model_hashes_like_its_json_dump() -> None:
    class Point(StrictModel):
        x: int
        label: str

    point = Point(x=3, label="é")
    assert content_hash(point) == content_hash({"label": "é", "x": 3})


def test_no_module_hashes_json_by_its_own_rule() -> None:
    """A ``json.dumps`` inside a ``sha256(...)`` call is a second hashing rule; use content_hash."""
    offenders = []
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            is_sha = isinstance(node, ast.Call) and ast.unparse(node.func).endswith("sha256")
            if is_sha and "json.dumps" in ast.unparse(node):
                offenders.append(f"{path.relative_to(SRC)}:{node.lineno}")
    assert offenders == []
