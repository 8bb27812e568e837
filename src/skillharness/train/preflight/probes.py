"""Preflight probes of what a run talks to: each endpoint, the run store, the response cache.

Each probe returns ``(problems, summary)``: one message per problem (empty: it passed) and a line
saying what was found. A probe touches nothing a run keeps: the endpoint request bypasses the
cache, the store is only opened and brought to the current schema (no run is created), and the
cache probe key is deleted again.
"""

from __future__ import annotations

import asyncio
import json
import secrets

from skillharness.errors import SkillharnessError
from skillharness.llm import REFUSAL_LIMITS, count_images, refuses_request, request_body
from skillharness.llm.cache.backend import redact_url
from skillharness.llm.cache.opener import open_backend
from skillharness.llm.config import CacheConfig, EndpointConfig, LLMConfig, TimeoutConfig
from skillharness.llm.roles import Role
from skillharness.llm.stack import build_chat_model
from skillharness.llm.types import ChatRequest, SamplingParams, draw_seed
from skillharness.store import RunStore, StoreConfig

__all__ = [
    "cache_problems",
    "endpoint_problems",
    "request_problems",
    "salt_note",
    "seed_ignored",
    "store_problems",
]

Outcome = tuple[list[str], str]
_PROBE_VALUE = b"skillharness preflight probe"


async def endpoint_problems(llm: LLMConfig, timeout_s: float) -> Outcome:
    """One 1-token request to every endpoint, uncached, under the run's retry policy.

    Each attempt waits at most ``timeout_s``. A transient failure (a 429 or 503, a cut stream, a
    gateway's page, a refused connection) is retried as a question's call would be, honouring
    Retry-After; a refused key, an unknown model or a bad URL fails at once.
    """
    results = await asyncio.gather(*(_ask(llm, endpoint, timeout_s) for endpoint in llm.endpoints))
    problems = [message for message in results if message is not None]
    return problems, f"{len(llm.endpoints)} endpoint(s) answer as model {llm.model!r}"


def _probe_config(llm: LLMConfig, endpoint: EndpointConfig, timeout_s: float) -> LLMConfig:
    """``llm`` reduced to ``endpoint``, each attempt within ``timeout_s``, and no breaker to wait on.

    The probe is one call whose attempts follow each other: the breaker, which shields a server
    from many callers, would only add its cooldown between them.
    """
    return llm.model_copy(
        update={
            "endpoints": (endpoint,),
            "timeouts": TimeoutConfig(
                connect_s=min(llm.timeouts.connect_s, timeout_s),
                read_s=min(llm.timeouts.read_s, timeout_s),
                write_s=min(llm.timeouts.write_s, timeout_s),
                pool_s=min(llm.timeouts.pool_s, timeout_s),
                total_s=min(llm.timeouts.total_s, timeout_s),
            ),
            "breaker": llm.breaker.model_copy(update={"failure_threshold": llm.retry.max_attempts + 1}),
        }
    )


async def _ask(llm: LLMConfig, endpoint: EndpointConfig, timeout_s: float) -> str | None:
    request = ChatRequest(
        model=llm.model,
        messages=({"role": "user", "content": "Reply with OK."},),
        role=Role.AGENT,
        sampling=SamplingParams(max_tokens=1, temperature=0.0),
    )
    try:
        async with build_chat_model(_probe_config(llm, endpoint, timeout_s), None) as stack:
            await stack.complete(request)
    except SkillharnessError as exc:  # AuthError, FatalLLMError, TransientLLMError (keys redacted)
        attempts = exc.context.get("attempts")
        tries = f" after {attempts} attempt(s) ({exc.context.get('gave_up')})" if attempts else ""
        return f"endpoint {endpoint.label} does not answer{tries}: {exc}"
    return None


async def request_problems(llm: LLMConfig, request: ChatRequest, question_id: str) -> Outcome:
    """``request`` (the run's largest, :func:`~skillharness.agent.largest.largest_request`) sent once
    to every endpoint, uncached, under the run's own timeouts and retry policy.

    The endpoint probe's one token in a text-only request passes a server that refuses every real
    request (a body limit, an images-per-prompt limit, a max_tokens limit): this one has the run's
    size, so such a server fails here, naming the HTTP status, the endpoint and the likely limit.
    """
    size = len(json.dumps(request_body(request), ensure_ascii=False, separators=(",", ":")).encode())
    shape = (
        f"question {question_id}: {size} bytes, {count_images(request.messages)} image(s), "
        f"max_tokens {request.sampling.max_tokens}"
    )
    results = await asyncio.gather(*(_send(llm, endpoint, request, shape) for endpoint in llm.endpoints))
    problems = [message for message in results if message is not None]
    return problems, f"{len(llm.endpoints)} endpoint(s) take a request of the run's size ({shape})"


async def _send(llm: LLMConfig, endpoint: EndpointConfig, request: ChatRequest, shape: str) -> str | None:
    config = llm.model_copy(update={"endpoints": (endpoint,)})
    try:
        async with build_chat_model(config, None) as stack:
            await stack.complete(request)
    except SkillharnessError as exc:
        if refuses_request(exc):
            limit = str(exc.context.get("limit", "unknown"))
            return (
                f"endpoint {endpoint.label} refuses a request of the run's size ({shape}): "
                f"HTTP {exc.context.get('status')}; likely limit: "
                f"{REFUSAL_LIMITS.get(limit, REFUSAL_LIMITS['unknown'])}. The server said: {exc}"
            )
        return f"endpoint {endpoint.label} does not answer a request of the run's size ({shape}): {exc}"
    return None


# Asked twice with one seed: a server that honours ``seed`` writes the same words both times.
_SEED_PROBE = "Write eight random words, separated by spaces, and nothing else."


async def seed_ignored(llm: LLMConfig, sampling: SamplingParams, timeout_s: float) -> list[str]:
    """The endpoints that ignore a request's ``seed`` (empty: every one honours it, or no seed is sent).

    With one seed per draw, both arms of a paired draw share a seed so that their answers are coupled;
    a server that ignores it samples them independently. Each endpoint is asked the same request twice
    with one seed, at the agent's temperature (at least 0.7), uncached: two different replies show
    the seed ignored. Two equal replies do not prove it honoured (a short reply can repeat by chance),
    so this names only servers that certainly ignore it. An endpoint that fails to answer is not named:
    the endpoint probe reports it.
    """
    if not sampling.per_draw or not sampling.temperature:
        return []
    probe = SamplingParams(
        temperature=max(sampling.temperature, 0.7), max_tokens=24, seed=draw_seed("seed", 0, "probe")
    )
    request = ChatRequest(
        model=llm.model,
        messages=({"role": "user", "content": _SEED_PROBE},),
        role=Role.AGENT,
        sampling=probe,
    )

    async def differs(endpoint: EndpointConfig) -> bool:
        try:
            async with build_chat_model(_probe_config(llm, endpoint, timeout_s), None) as stack:
                first = await stack.complete(request)
                second = await stack.complete(request)
        except SkillharnessError:
            return False
        return (first.content, first.tool_calls) != (second.content, second.tool_calls)

    found = await asyncio.gather(*(differs(endpoint) for endpoint in llm.endpoints))
    return [endpoint.label for endpoint, ignored in zip(llm.endpoints, found, strict=True) if ignored]


def store_problems(store: StoreConfig) -> Outcome:
    """Open the store as a writer and bring it to the current schema; create no run."""
    try:
        with RunStore.open(store) as opened:
            return [], f"run store {opened.display} is writable"
    except (SkillharnessError, OSError) as exc:
        return [f"run store is not writable: {exc}"], ""


async def cache_problems(cache: CacheConfig) -> Outcome:
    """Put, read back and delete a probe key in the cache's namespace."""
    if not cache.enabled:
        return [], "cache disabled (cache.enabled = false): nothing to check"
    where = f"cache {redact_url(cache.url)} (namespace {cache.namespace})"
    key = f"preflight-probe-{secrets.token_hex(8)}"
    try:
        backend = open_backend(cache.url, cache.namespace)
        try:
            await backend.put(key, _PROBE_VALUE, ttl_s=60.0)
            read = await backend.get(key)
            await backend.delete(key)
        finally:
            await backend.aclose()
    except (SkillharnessError, OSError) as exc:
        return [f"{where} is not writable: {exc}"], ""
    if read != _PROBE_VALUE:
        return [f"{where} did not return the probe value it was given"], ""
    return [], f"{where} is writable"


def salt_note(cache: CacheConfig) -> str:
    """The cache salt a training run will use (audit P1-1): information, never a problem."""
    if not cache.enabled:
        return "cache disabled: every training sample is fresh"
    if cache.salt is not None:
        return f"cache.salt = {cache.salt!r}: every run with this salt shares its cached samples"
    return "a fresh salt per training run (the run id): its samples are its own"
