"""No part of an API key leaves the client, wherever a server echoes it and wherever it is cut."""

from __future__ import annotations

import json

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillharness.errors import LLMError
from skillharness.llm import build_chat_model
from skillharness.llm.client import request_body
from skillharness.llm.config import EndpointConfig, LLMConfig, RetryConfig
from skillharness.llm.errors import error_for_status
from skillharness.llm.redact import MASK, MIN_PREFIX, redact
from skillharness.llm.roles import Role
from skillharness.llm.stream import StreamAssembler
from skillharness.llm.types import ChatRequest, SamplingParams
from skillharness.sim import SimConfig, SimServer
from skillharness.sim.config import FaultKind

_ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
secrets_st = st.text(_ALPHABET, min_size=20, max_size=48).map(lambda s: "sk-" + s)
filler_st = st.text(" .,:;-_xyz{}\"'=", max_size=400)


def _request(model: str) -> ChatRequest:
    return ChatRequest(
        model=model,
        messages=({"role": "user", "content": "hi"},),
        role=Role.JUDGE,
        sampling=SamplingParams(temperature=0.0),
    )


def _leaks(text: str, secret: str) -> list[str]:
    """Every run of >= MIN_PREFIX characters of ``secret`` (any part of it) found in ``text``."""
    return [
        secret[i : i + MIN_PREFIX]
        for i in range(len(secret) - MIN_PREFIX + 1)
        if secret[i : i + MIN_PREFIX] in text
    ]


def _body(shape: str, secret: str, pad: str, order: list[int]) -> str:
    headers = [("authorization", f"Bearer {secret}"), ("content-type", "application/json"), ("x-key", secret)]
    quoted = "; ".join(f"{headers[i][0]}: {headers[i][1]}" for i in order)
    if shape == "json":
        return json.dumps({"error": {"message": f"{pad} rejected {quoted}", "type": "invalid_request_error"}})
    if shape == "sse":
        return f"data: {json.dumps({'error': {'message': pad + quoted, 'code': 500}})}\n\n"
    return f"{pad}{quoted}\n"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    secret=secrets_st,
    pad=filler_st,
    shape=st.sampled_from(["json", "text", "sse"]),
    order=st.permutations([0, 1, 2]),
    status=st.sampled_from([400, 404, 422, 429, 500, 503]),
)
def test_partial_key_prefix_is_masked_before_truncation(
    secret: str, pad: str, shape: str, order: list[int], status: int
) -> None:
    body = _body(shape, secret, pad, order)
    error = error_for_status(status, body, "gpu-1", secrets=(secret,))
    assert _leaks(str(error), secret) == [], str(error)
    assert _leaks(repr(dict(error.context)), secret) == []


@settings(max_examples=300, deadline=None)
@given(secret=secrets_st, pad=filler_st, order=st.permutations([0, 1, 2]), cut=st.integers(0, 600))
def test_a_body_cut_inside_the_key_by_the_reader_leaves_no_prefix(
    secret: str, pad: str, order: list[int], cut: int
) -> None:
    text = _body("text", secret, pad, order)[:cut]
    masked = redact(text, (secret,), cut=True)
    assert _leaks(masked, secret) == []
    # Whatever prefix of the key the cut left at the very end, even a short one, is gone too.
    assert not any(masked.endswith(secret[:n]) for n in range(1, MIN_PREFIX))


@settings(max_examples=200, deadline=None)
@given(secret=secrets_st, pad=filler_st, order=st.permutations([0, 1, 2]))
def test_a_key_echoed_in_an_sse_error_frame_is_masked_before_the_excerpt(
    secret: str, pad: str, order: list[int]
) -> None:
    assembler = StreamAssembler("gpu-1", (secret,))
    frame = _body("sse", secret, pad, order).removeprefix("data: ").strip()
    assembler.feed(frame)
    assembler.feed("[DONE]")
    with pytest.raises(LLMError) as info:
        assembler.finish()
    assert _leaks(str(info.value), secret) == []


def test_any_echoed_bearer_token_is_masked_even_when_it_is_not_ours() -> None:
    text = "headers: authorization: BEARER someone-elses-token.abc; other: 1"
    assert redact(text, ()) == f"headers: authorization: BEARER {MASK}; other: 1"


async def _raw_echo(base_url: str, secret: str, model: str) -> int:
    """Where the key lands in the echo body for the client's exact request (read unmasked)."""
    body = json.dumps(request_body(_request(model)), ensure_ascii=False, separators=(",", ":")).encode()
    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {secret}"}
    async with httpx.AsyncClient() as client:
        reply = await client.post(base_url + "/chat/completions", content=body, headers=headers)
    return reply.text.index(secret)


async def test_an_endpoint_echoing_headers_leaks_no_key_prefix_at_any_cut(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    secret = "sk-live-" + "Q7rT2wX9" * 3
    monkeypatch.setenv("SH_ECHO_KEY", secret)
    with SimServer(SimConfig(seed=1)) as sim:
        endpoint = EndpointConfig(base_url=sim.base_url, api_key_env="SH_ECHO_KEY")
        config = LLMConfig(model=sim.model_name, endpoints=(endpoint,), retry=RetryConfig(max_attempts=1))
        sim.force_fault(FaultKind.ECHO_HEADERS)
        base = await _raw_echo(sim.base_url, secret, sim.model_name)
        # Filler lengths that put the 300-character excerpt cut, and the client's 2 KiB read
        # limit, at every position inside the echoed key (and just around it).
        starts = [*range(300 - len(secret) - 2, 303), *range(2048 - len(secret) - 2, 2051)]
        async with build_chat_model(config) as model:
            for pad in (start - base for start in starts):
                for kind in (FaultKind.ECHO_HEADERS, FaultKind.HTTP_401):
                    sim.configure_faults(echo_pad_chars=pad)
                    sim.force_fault(kind)
                    with pytest.raises(LLMError) as info:
                        await model.complete(_request(sim.model_name))
                    shown = f"{info.value} {dict(info.value.context)!r}"
                    assert _leaks(shown, secret) == [], (pad, kind, shown)
        # The sweep is real: unmasked, the 300-character excerpt would end 20 characters into the key.
        sim.configure_faults(echo_pad_chars=300 - 20 - base)
        sim.force_fault(FaultKind.ECHO_HEADERS)
        assert await _raw_echo(sim.base_url, secret, sim.model_name) == 300 - 20
