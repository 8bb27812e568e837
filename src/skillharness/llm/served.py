"""Whether an endpoint serves a model by the name the config sends.

A wrong name costs a whole run: every request is refused (vLLM answers 404) and each question ends
an infra error. ``GET /models`` lists the names a server takes (vLLM lists its
``--served-model-name``s, the simulator ``model_names``), so a name it lists is served. A name it
does not list is asked by name once, with a 1-token request: llama.cpp lists its model file yet
answers any name, and only a refusal proves the name wrong. A server without a listing (a 404 on
``/models``, an empty list) cannot be checked against one; the verdict says so rather than pass.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from skillharness.errors import AuthError, FatalLLMError, SkillharnessError
from skillharness.llm.config import EndpointConfig, LLMConfig, TimeoutConfig
from skillharness.llm.probe import ModelListing
from skillharness.llm.roles import Role
from skillharness.llm.stack import build_chat_model
from skillharness.llm.types import ChatRequest, SamplingParams

__all__ = ["Served", "ServedVerdict", "ask_by_name", "probe_config", "served_verdict"]

_SHOWN = 10  # listed names quoted in a message


class Served(StrEnum):
    """How a model name fared on one endpoint."""

    LISTED = "listed"  # GET /models lists it
    ANSWERED = "answered"  # not listed, but a request by that name was answered
    UNCHECKED = "unchecked"  # no listing to check it against (and not refused when asked)
    REFUSED = "refused"  # not listed, and a request by that name was refused


@dataclass(frozen=True)
class ServedVerdict:
    """One (endpoint, model name) verdict and the sentence that explains it."""

    endpoint: str
    model: str
    served: Served
    message: str


def probe_config(llm: LLMConfig, endpoint: EndpointConfig, timeout_s: float) -> LLMConfig:
    """``llm`` reduced to ``endpoint``, each attempt within ``timeout_s``, and no breaker to wait on.

    A probe is one call whose attempts follow each other: the breaker, which shields a server from
    many callers, would only add its cooldown between them.
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


async def ask_by_name(
    llm: LLMConfig, endpoint: EndpointConfig, model: str, timeout_s: float
) -> SkillharnessError | None:
    """Send ``endpoint`` one uncached 1-token request as ``model``; the error it ended with, or None."""
    request = ChatRequest(
        model=model,
        messages=({"role": "user", "content": "Reply with OK."},),
        role=Role.AGENT,
        sampling=SamplingParams(max_tokens=1, temperature=0.0),
    )
    try:
        async with build_chat_model(probe_config(llm, endpoint, timeout_s), None) as stack:
            await stack.complete(request)
    except SkillharnessError as exc:  # AuthError, FatalLLMError, TransientLLMError (keys redacted)
        return exc
    return None


def _listed(listing: ModelListing) -> str:
    names = ", ".join(repr(name) for name in listing.ids[:_SHOWN])
    more = f" ... ({len(listing.ids)} in all)" if len(listing.ids) > _SHOWN else ""
    return names + more


async def served_verdict(
    llm: LLMConfig,
    endpoint: EndpointConfig,
    listing: ModelListing,
    model: str,
    timeout_s: float,
    *,
    ask_unlisted: bool,
) -> ServedVerdict:
    """Whether ``endpoint`` (which listed ``listing``) serves ``model``.

    A name missing from a listing is always asked by name; with no listing at all it is asked only
    when ``ask_unlisted`` (preflight asks; a run's start-up leaves that to its first request).
    """
    label = endpoint.label
    if listing.known and model in listing.ids:
        return ServedVerdict(label, model, Served.LISTED, f"{label} lists {model!r} on GET /models")
    if not listing.known and not ask_unlisted:
        why = f"{label} gives no model listing ({listing.url}: {listing.unlisted})"
        return ServedVerdict(label, model, Served.UNCHECKED, f"{why}: {model!r} was not checked")
    error = await ask_by_name(llm, endpoint, model, timeout_s)
    if listing.known:
        seen = f"{label} does not list {model!r} on GET /models (it lists {_listed(listing)})"
    else:
        seen = (
            f"{label} gives no model listing ({listing.url}: {listing.unlisted}), so {model!r} "
            "was not checked against one"
        )
    if isinstance(error, FatalLLMError) and not isinstance(error, AuthError):
        return ServedVerdict(
            label, model, Served.REFUSED, f"{seen}, and it refused a request as {model!r}: {error}"
        )
    if error is not None:  # a key or an outage: the endpoint's own check names it
        return ServedVerdict(label, model, Served.UNCHECKED, f"{seen}; asking it failed: {error}")
    if listing.known:  # llama.cpp: lists its model file, answers any name
        return ServedVerdict(
            label,
            model,
            Served.ANSWERED,
            f"{seen}, yet it answered a request as {model!r} (it takes any name)",
        )
    return ServedVerdict(
        label, model, Served.UNCHECKED, f"{seen}; it answered a 1-token request as {model!r}"
    )
