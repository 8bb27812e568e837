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
from dataclasses import dataclass, field

import httpx

from skillharness.errors import SkillharnessError
from skillharness.llm import REFUSAL_LIMITS, count_images, refuses_request, request_body
from skillharness.llm.cache.backend import redact_url
from skillharness.llm.cache.opener import open_backend
from skillharness.llm.config import CacheConfig, EndpointConfig, LLMConfig
from skillharness.llm.probe import ModelListing, probe_models
from skillharness.llm.roles import Role
from skillharness.llm.served import ask_by_name, probe_config
from skillharness.llm.stack import build_chat_model
from skillharness.llm.types import ChatRequest, SamplingParams, draw_seed
from skillharness.store import RunStore, StoreConfig

__all__ = [
    "EndpointAnswer",
    "SeedFindings",
    "cache_problems",
    "endpoint_problems",
    "probe_endpoint",
    "probe_endpoints",
    "request_problems",
    "salt_note",
    "seed_findings",
    "seed_ignored",
    "store_problems",
]

Outcome = tuple[list[str], str]
_PROBE_VALUE = b"skillharness preflight probe"


@dataclass(frozen=True)
class EndpointAnswer:
    """How one endpoint answered the probe: its model listing, or why it does not answer."""

    endpoint: EndpointConfig
    listing: ModelListing | None = None
    problem: str | None = None

    @property
    def answered(self) -> bool:
        return self.problem is None


async def probe_endpoints(llm: LLMConfig, timeout_s: float) -> tuple[EndpointAnswer, ...]:
    """Every endpoint's ``GET /models`` and one 1-token request, uncached, under the run's retry
    policy, each attempt within ``timeout_s`` (see :func:`probe_endpoint`)."""
    return tuple(await asyncio.gather(*(probe_endpoint(llm, e, timeout_s) for e in llm.endpoints)))


async def probe_endpoint(llm: LLMConfig, endpoint: EndpointConfig, timeout_s: float) -> EndpointAnswer:
    """``GET /models``, then one 1-token request as ``llm.model``.

    A transient failure (a 429 or 503, a cut stream, a gateway's page, a timeout) is retried as a
    question's call would be, honouring Retry-After; a refused key or a bad URL fails at once, and
    a refused connection after about a second (:data:`~skillharness.llm.probe.REFUSED_ATTEMPTS`).
    The request is not sent when the listing shows the model is not served by that name: the
    ``model`` check asks it by name and says so, one problem for one cause.
    """
    try:
        async with httpx.AsyncClient(timeout=httpx.Timeout(timeout_s)) as client:
            listing = await probe_models(client, endpoint, llm.retry)
    except SkillharnessError as exc:
        return EndpointAnswer(endpoint, problem=_does_not_answer(endpoint, exc))
    if listing.known and llm.model not in listing.ids:
        return EndpointAnswer(endpoint, listing)
    error = await ask_by_name(llm, endpoint, llm.model, timeout_s)
    return EndpointAnswer(endpoint, listing, None if error is None else _does_not_answer(endpoint, error))


def _does_not_answer(endpoint: EndpointConfig, exc: SkillharnessError) -> str:
    if exc.context.get("kind") == "connection_refused":
        return str(exc)  # names the endpoint, the URL and the attempts itself
    attempts, gave_up = exc.context.get("attempts"), exc.context.get("gave_up")
    tries = f" after {attempts} attempt(s) ({gave_up})" if attempts and gave_up else ""
    return f"endpoint {endpoint.label} does not answer{tries}: {exc}"


async def endpoint_problems(llm: LLMConfig, timeout_s: float) -> Outcome:
    """:func:`probe_endpoints` as one problem per endpoint that does not answer, and a summary."""
    answers = await probe_endpoints(llm, timeout_s)
    problems = [a.problem for a in answers if a.problem is not None]
    return problems, f"{len(llm.endpoints)} endpoint(s) answer GET /models and a 1-token request"


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


@dataclass(frozen=True)
class SeedFindings:
    """What the seed probe found: the endpoints that ignore the seed, and those it could not ask."""

    ignoring: tuple[str, ...] = ()
    failed: dict[str, str] = field(default_factory=dict)  # endpoint label: why it could not be asked


async def seed_ignored(llm: LLMConfig, sampling: SamplingParams, timeout_s: float) -> list[str]:
    """The endpoints that certainly ignore a request's ``seed`` (see :func:`seed_findings`); one that
    could not be asked is not named (the endpoint probe reports it)."""
    return list((await seed_findings(llm, sampling, timeout_s)).ignoring)


async def seed_findings(
    llm: LLMConfig,
    sampling: SamplingParams,
    timeout_s: float,
    endpoints: tuple[EndpointConfig, ...] | None = None,
) -> SeedFindings:
    """Ask ``endpoints`` (default: all of ``llm``'s) whether they honour a request's ``seed``.

    With one seed per draw, both arms of a paired draw share a seed so that their answers are coupled;
    a server that ignores it samples them independently. Each endpoint is asked the same request twice
    with one seed, at the agent's temperature (at least 0.7), uncached: two different replies show
    the seed ignored. Two equal replies do not prove it honoured (a short reply can repeat by chance),
    so this names only servers that certainly ignore it. Nothing is asked when no seed is sent.
    """
    if not sampling.per_draw or not sampling.temperature:
        return SeedFindings()
    probe = SamplingParams(
        temperature=max(sampling.temperature, 0.7), max_tokens=24, seed=draw_seed("seed", 0, "probe")
    )
    request = ChatRequest(
        model=llm.model,
        messages=({"role": "user", "content": _SEED_PROBE},),
        role=Role.AGENT,
        sampling=probe,
    )

    async def differs(endpoint: EndpointConfig) -> bool | str:
        try:
            async with build_chat_model(probe_config(llm, endpoint, timeout_s), None) as stack:
                first = await stack.complete(request)
                second = await stack.complete(request)
        except SkillharnessError as exc:
            return str(exc)
        return (first.content, first.tool_calls) != (second.content, second.tool_calls)

    asked = llm.endpoints if endpoints is None else endpoints
    found = await asyncio.gather(*(differs(endpoint) for endpoint in asked))
    pairs = list(zip(asked, found, strict=True))
    return SeedFindings(
        ignoring=tuple(e.label for e, ignored in pairs if ignored is True),
        failed={e.label: why for e, why in pairs if isinstance(why, str)},
    )


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
