"""Per-draw seeds (issue 29): one seed per (question, sample index, salt), whatever the prompt."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from llm_support import make_request
from pydantic import ValidationError

from skillharness.llm import PER_DRAW, draw_seed
from skillharness.llm.cache.key import cache_key
from skillharness.llm.client import request_body
from skillharness.llm.types import SamplingParams

_IDS = st.text(min_size=1, max_size=12)
_INDEX = st.integers(min_value=0, max_value=10_000)


@given(_IDS, _INDEX, st.text(max_size=8))
@settings(max_examples=200)
def test_a_draws_seed_is_stable_and_fits_a_servers_seed(question_id: str, sample_idx: int, salt: str) -> None:
    seed = draw_seed(question_id, sample_idx, salt)
    assert seed == draw_seed(question_id, sample_idx, salt)  # a replay sends the same seed
    assert 0 <= seed < 2**31


def test_different_draws_and_salts_get_different_seeds() -> None:
    seeds = {draw_seed(f"q{q}", s, "run") for q in range(40) for s in range(25)}
    assert len(seeds) == 1000  # no two of 1,000 draws collide
    assert draw_seed("q1", 0, "run") != draw_seed("q1", 0, "other run")
    assert draw_seed("q1", 0, "run") != draw_seed("q1", 1, "run")
    assert draw_seed("q1", 0, "run") != draw_seed("q2", 0, "run")


def test_per_draw_resolves_to_the_draws_seed_and_leaves_other_seeds_alone() -> None:
    per_draw = SamplingParams(temperature=0.8, seed=PER_DRAW)
    assert per_draw.per_draw
    resolved = per_draw.for_draw("q1", 3, "salt")
    assert resolved == SamplingParams(temperature=0.8, seed=draw_seed("q1", 3, "salt"))
    fixed = SamplingParams(temperature=0.8, seed=7)
    assert fixed.for_draw("q1", 3, "salt") is fixed
    assert SamplingParams(temperature=0.8).for_draw("q1", 3, "salt").seed is None


def test_a_request_never_carries_an_unresolved_per_draw_seed() -> None:
    with pytest.raises(ValidationError, match="per_draw"):
        make_request(sampling=SamplingParams(temperature=0.8, seed=PER_DRAW))
    request = make_request(sampling=SamplingParams(temperature=0.8).for_draw("q1", 0, ""))
    assert "seed" not in request_body(request)


@given(_IDS, _INDEX, _INDEX)
@settings(max_examples=100)
def test_issue_29_the_cache_key_includes_the_per_draw_seed(question_id: str, a: int, b: int) -> None:
    # Two draws of one prompt with different seeds are two answers, never one cache entry; the
    # same draw asked again is the same entry. The sample index is held fixed to isolate the seed.
    base = make_request()

    def with_seed(sample_idx: int) -> str:
        sampling = SamplingParams(temperature=0.8, seed=PER_DRAW).for_draw(question_id, sample_idx, "s")
        return cache_key(base.model_copy(update={"sampling": sampling}), None)

    assert (with_seed(a) == with_seed(b)) == (
        draw_seed(question_id, a, "s") == draw_seed(question_id, b, "s")
    )
    assert with_seed(a) == with_seed(a)
    body = request_body(
        base.model_copy(update={"sampling": SamplingParams(seed=draw_seed(question_id, a, "s"))})
    )
    assert body["seed"] == draw_seed(question_id, a, "s")
