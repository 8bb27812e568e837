"""Before the first question: every endpoint's key is set, every endpoint answers, and serves the model.

A missing key, a refused port, a typo in ``base_url`` or in the model's name would otherwise be
found question by question, each one waiting out retries and the breaker's deadline (up to 15
minutes) or failing as an ``infra_error``. A ``GET {base_url}/models`` per endpoint, with a short
timeout, finds them before anything is spent (see :func:`skillharness.llm.probe.probe_models`: a
refused key stops the run at once, a refused connection after a second, another transient failure
only once it outlasts the retries), and its listing says whether the model names are served
(:func:`skillharness.llm.served.served_verdict`).
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Mapping

import httpx

from skillharness.errors import ConfigError, FatalLLMError, TransientLLMError
from skillharness.llm.config import EndpointConfig, LLMConfig
from skillharness.llm.probe import ModelListing, probe_models
from skillharness.llm.served import Served, served_verdict

__all__ = ["check_keys", "check_served", "probe_endpoints"]

_log = logging.getLogger(__name__)


def check_keys(llm: LLMConfig) -> None:
    """Refuse to start when an endpoint names an ``api_key_env`` that is unset or empty."""
    missing = [ep for ep in llm.endpoints if ep.api_key_env and not os.environ.get(ep.api_key_env)]
    if missing:
        names = "; ".join(f"{ep.label} needs env var {ep.api_key_env}" for ep in missing)
        raise ConfigError(
            f"API key not set: {names} (llm.endpoints[].api_key_env names the variable holding the key)",
            env_vars=[ep.api_key_env for ep in missing],
        )


async def _probe(client: httpx.AsyncClient, endpoint: EndpointConfig, llm: LLMConfig) -> ModelListing:
    try:
        return await probe_models(client, endpoint, llm.retry)
    except TransientLLMError as exc:
        attempts = exc.context.get("attempts", 1)
        url = endpoint.base_url.rstrip("/") + "/models"
        raise FatalLLMError(
            f"endpoint {endpoint.label} cannot be reached on GET {url} after {attempts} attempt(s) "
            f"({exc.context.get('gave_up')}): {exc}; is the server running and is "
            "llm.endpoints[].base_url right?",
            kind="unreachable",
            endpoint=endpoint.label,
            cause=str(exc.context.get("kind")),
            attempts=attempts,
        ) from exc


async def probe_endpoints(
    llm: LLMConfig, models: Mapping[str, str] | None = None
) -> tuple[ModelListing, ...]:
    """Check keys, then ``GET /models`` on every endpoint; raise for the first (in config order)
    that cannot work. Return each endpoint's listing, in config order.

    Each request waits at most ``llm.timeouts.probe_s``; transient failures are retried under
    ``llm.retry`` (Retry-After honoured), all endpoints at once, so a dead one is reported after
    its retries rather than a live one's hiccup stopping the run. ``models`` maps each model name
    the run sends to the setting that names it (``{"m": "llm.model"}``): each must be served by
    every endpoint (:func:`check_served`); None checks no name.
    """
    check_keys(llm)
    timeout = httpx.Timeout(llm.timeouts.probe_s)
    # Plain-HTTP endpoints only: no TLS context (loading the CA bundle is start-up CPU for nothing).
    plain = all(e.base_url.lower().startswith("http:") for e in llm.endpoints)
    async with httpx.AsyncClient(timeout=timeout, verify=not plain) as client:
        outcomes = await asyncio.gather(
            *(_probe(client, endpoint, llm) for endpoint in llm.endpoints), return_exceptions=True
        )
    listings = []
    for outcome in outcomes:
        if isinstance(outcome, BaseException):
            raise outcome
        listings.append(outcome)
    if models:
        await check_served(llm, tuple(listings), models)
    return tuple(listings)


async def check_served(llm: LLMConfig, listings: tuple[ModelListing, ...], models: Mapping[str, str]) -> None:
    """Raise ConfigError when an endpoint refuses a model name of ``models`` (name: its setting).

    A name an endpoint does not list is asked by name once (llama.cpp lists its file, answers any
    name); an endpoint without a listing is not asked (the run's first request will say), and a
    warning says the name went unchecked there.
    """
    pairs = [
        (endpoint, listing, name)
        for endpoint, listing in zip(llm.endpoints, listings, strict=True)
        for name in models
    ]
    verdicts = await asyncio.gather(
        *(
            served_verdict(llm, e, listing, name, llm.timeouts.probe_s, ask_unlisted=False)
            for e, listing, name in pairs
        )
    )
    for verdict in verdicts:
        if verdict.served is Served.UNCHECKED:
            _log.warning("%s", verdict.message)
        if verdict.served is Served.REFUSED:
            setting = models[verdict.model]
            raise ConfigError(
                f"model {verdict.model!r} ({setting}) is not served: {verdict.message}. Set {setting} to a "
                "name the server serves",
                field=setting,
                model=verdict.model,
                endpoint=verdict.endpoint,
            )
