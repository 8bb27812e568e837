"""Before the first question: every endpoint's key is set, and every endpoint answers.

A missing key, a refused port or a typo in ``base_url`` would otherwise be found question by
question, each one waiting out retries and the breaker's deadline (up to 15 minutes) before
becoming an ``infra_error``. A ``GET {base_url}/models`` per endpoint, with a short timeout,
finds all three before anything is spent (see :func:`skillharness.llm.probe.probe_models`: a
refused key stops the run at once, a transient failure only once it outlasts the retries).
"""

from __future__ import annotations

import asyncio
import os

import httpx

from skillharness.errors import ConfigError, FatalLLMError, TransientLLMError
from skillharness.llm.config import EndpointConfig, LLMConfig
from skillharness.llm.probe import probe_models

__all__ = ["check_keys", "probe_endpoints"]


def check_keys(llm: LLMConfig) -> None:
    """Refuse to start when an endpoint names an ``api_key_env`` that is unset or empty."""
    missing = [ep for ep in llm.endpoints if ep.api_key_env and not os.environ.get(ep.api_key_env)]
    if missing:
        names = "; ".join(f"{ep.label} needs env var {ep.api_key_env}" for ep in missing)
        raise ConfigError(
            f"API key not set: {names} (llm.endpoints[].api_key_env names the variable holding the key)",
            env_vars=[ep.api_key_env for ep in missing],
        )


async def _probe(client: httpx.AsyncClient, endpoint: EndpointConfig, llm: LLMConfig) -> None:
    try:
        await probe_models(client, endpoint, llm.retry)
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


async def probe_endpoints(llm: LLMConfig) -> None:
    """Check keys, then ``GET /models`` on every endpoint; raise for the first (in config order)
    that cannot work.

    Each request waits at most ``llm.timeouts.probe_s``; transient failures are retried under
    ``llm.retry`` (Retry-After honoured), all endpoints at once, so a dead one is reported after
    its retries rather than a live one's hiccup stopping the run.
    """
    check_keys(llm)
    timeout = httpx.Timeout(llm.timeouts.probe_s)
    # Plain-HTTP endpoints only: no TLS context (loading the CA bundle is start-up CPU for nothing).
    plain = all(e.base_url.lower().startswith("http:") for e in llm.endpoints)
    async with httpx.AsyncClient(timeout=timeout, verify=not plain) as client:
        outcomes = await asyncio.gather(
            *(_probe(client, endpoint, llm) for endpoint in llm.endpoints), return_exceptions=True
        )
    for outcome in outcomes:
        if isinstance(outcome, BaseException):
            raise outcome
