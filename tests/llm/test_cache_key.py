"""The cache key covers all request content, every sampling parameter, sample index and salt
(audit P1-1); TTL is explicit."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from llm_support import make_request
from pydantic import ValidationError

from skillharness.errors import ConfigError, FatalLLMError
from skillharness.llm.cache.key import cache_key, key_material
from skillharness.llm.cache.ttl import parse_ttl
from skillharness.llm.config import CacheConfig
from skillharness.llm.roles import Role, response_format
from skillharness.llm.types import ChatRequest, SamplingParams

SAMPLING_VALUES = {
    "temperature": 0.7,
    "top_p": 0.9,
    "top_k": 40,
    "max_tokens": 256,
    "seed": 11,
    "presence_penalty": 0.5,
    "frequency_penalty": 0.25,
    "repetition_penalty": 1.1,
    "stop": ("END",),
}


def test_sampling_value_table_covers_every_field() -> None:
    # If SamplingParams grows, this table (and so the property below) must grow too.
    assert set(SAMPLING_VALUES) == set(SamplingParams.model_fields)


def test_p1_1_cache_key_includes_sampling_params_and_salt() -> None:
    base = make_request(sampling=SamplingParams())
    keys = {cache_key(base, None)}
    for name, value in SAMPLING_VALUES.items():
        changed = base.model_copy(update={"sampling": SamplingParams(**{name: value})})
        keys.add(cache_key(changed, None))
    keys.add(cache_key(base.model_copy(update={"sample_idx": 1}), None))
    keys.add(cache_key(base, "run-1"))
    keys.add(cache_key(base, "run-2"))
    assert len(keys) == len(SAMPLING_VALUES) + 4
    # Unset parameters are explicit nulls, not absent keys.
    material = key_material(base, None)
    assert material["sampling"] == dict.fromkeys(SamplingParams.model_fields)
    assert material["salt"] is None


def test_key_covers_tools_tool_choice_response_format_extra_body_and_tool_results() -> None:
    base = make_request()
    tool = {"type": "function", "function": {"name": "submit_answer", "parameters": {}}}
    variants = [
        base.model_copy(update={"tools": (tool,)}),
        base.model_copy(update={"tool_choice": "required"}),
        base.model_copy(update={"response_format": response_format(Role.JUDGE)}),
        base.model_copy(update={"extra_body": {"top_a": 1}}),
        base.model_copy(update={"model": "other"}),
        base.model_copy(
            update={
                "messages": (
                    *base.messages,
                    {
                        "role": "assistant",
                        "tool_calls": [{"id": "1", "function": {"name": "x", "arguments": "{}"}}],
                    },
                    {"role": "tool", "tool_call_id": "1", "content": "frames"},
                )
            }
        ),
    ]
    keys = {cache_key(v, None) for v in [base, *variants]}
    assert len(keys) == len(variants) + 1


def test_key_ignores_role_label_only_when_content_is_equal() -> None:
    # The role is derived from content; two requests with identical content share a key.
    assert cache_key(make_request(role=Role.JUDGE), None) == cache_key(make_request(role=Role.RANK), None)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-1000, 1000) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=10,
)


def _reordered(value: object) -> object:
    if isinstance(value, dict):
        return {k: _reordered(value[k]) for k in reversed(list(value))}
    if isinstance(value, list):
        return [_reordered(v) for v in value]
    return value


@settings(max_examples=200, deadline=None)
@given(extra=st.dictionaries(st.text(max_size=6), json_values, max_size=4), text=st.text(max_size=20))
def test_key_is_stable_under_dict_ordering(extra: dict[str, object], text: str) -> None:
    message = {"role": "user", "content": text, "meta": extra}
    first = ChatRequest(model="m", messages=(message,), role=Role.AGENT, extra_body=extra or None)
    second = ChatRequest(
        model="m", messages=(_reordered(message),), role=Role.AGENT, extra_body=_reordered(extra) or None
    )
    assert cache_key(first, "s") == cache_key(second, "s")


sampling_strategy = st.builds(
    SamplingParams,
    temperature=st.none() | st.floats(0, 2, allow_nan=False),
    top_p=st.none() | st.floats(0, 1, allow_nan=False, exclude_min=True),
    top_k=st.none() | st.integers(0, 100),
    max_tokens=st.none() | st.integers(1, 4096),
    seed=st.none() | st.integers(0, 2**31),
    presence_penalty=st.none() | st.floats(-2, 2, allow_nan=False),
    frequency_penalty=st.none() | st.floats(-2, 2, allow_nan=False),
    repetition_penalty=st.none() | st.floats(0, 2, allow_nan=False),
    stop=st.none() | st.tuples(st.text(min_size=1, max_size=4)),
)


@settings(max_examples=200, deadline=None)
@given(a=sampling_strategy, b=sampling_strategy)
def test_key_distinct_under_any_sampling_change(a: SamplingParams, b: SamplingParams) -> None:
    ka = cache_key(make_request(sampling=a), None)
    kb = cache_key(make_request(sampling=b), None)
    # Compared as JSON so that 0.0 and -0.0 (equal floats, different requests on the wire) differ.
    assert (ka == kb) == (a.model_dump_json() == b.model_dump_json())


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("never", None),
        ("NEVER", None),
        ("30s", 30),
        ("7d", 604800),
        ("1h30m", 5400),
        ("0.5h", 1800),
        ("2w", 1209600),
    ],
)
def test_ttl_parses(text: str, seconds: float | None) -> None:
    assert parse_ttl(text) == seconds


@pytest.mark.parametrize("text", ["0", "0s", "0d", "", "10", "-1h", "forever", "1x", "h", "1h 30m"])
def test_ttl_refuses_magic_and_garbage(text: str) -> None:
    with pytest.raises(ConfigError, match=r"cache\.ttl"):
        parse_ttl(text)


def test_cache_config_rejects_zero_ttl_with_key_path() -> None:
    with pytest.raises(ValueError, match="ttl"):
        CacheConfig(ttl="0")


def test_non_finite_sampling_values_are_refused_at_the_boundary() -> None:
    with pytest.raises(ValidationError):
        SamplingParams(temperature=float("nan"))
    with pytest.raises(ValidationError):
        SamplingParams(top_p=float("inf"))


def test_non_json_extra_body_is_our_fatal_error_not_a_bare_value_error() -> None:
    # NaN is not JSON: no server can be asked it, and no key can name it. Our error, not retried.
    request = make_request(extra_body={"min_p": float("nan")})
    with pytest.raises(FatalLLMError, match="extra_body"):
        cache_key(request, None)
    with pytest.raises(FatalLLMError, match="not valid JSON"):
        cache_key(make_request("half a character \ud83d"), None)  # no UTF-8 for a lone surrogate


def test_number_spelling_and_unicode_form_are_part_of_the_key() -> None:
    # Documented decision: the key hashes the request as sent. 1 and 1.0, or NFC and NFD text,
    # are different bytes on the wire (and different tokens), so they are different keys: at
    # worst a second call, never another request's answer.
    assert cache_key(make_request(extra_body={"x": 1}), None) != cache_key(
        make_request(extra_body={"x": 1.0}), None
    )
    assert cache_key(make_request("caf\u00e9"), None) != cache_key(make_request("cafe\u0301"), None)
    assert cache_key(make_request(sampling=SamplingParams(temperature=1)), None) == cache_key(
        make_request(sampling=SamplingParams(temperature=1.0)), None
    )
