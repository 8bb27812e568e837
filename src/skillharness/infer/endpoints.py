"""Before the first question: every endpoint's key is set, and every endpoint answers.

A missing key, a refused port or a typo in ``base_url`` would otherwise be found question by
question, each one waiting out retries and the breaker's deadline (up to 15 minutes) before
becoming an ``infra_error``. One ``GET {base_url}/models`` per endpoint, with a short timeout,
finds all three before anything is spent.
"""

from __future__ import annotations

import os

import httpx

from skillharness.errors import AuthError, ConfigError, FatalLLMError
from skillharness.llm.config import EndpointConfig, LLMConfig

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


async def _probe(client: httpx.AsyncClient, endpoint: EndpointConfig) -> None:
    url = endpoint.base_url.rstrip("/") + "/models"
    headers = {}
    if endpoint.api_key_env:
        headers["Authorization"] = f"Bearer {os.environ.get(endpoint.api_key_env, '')}"
    try:
        response = await client.get(url, headers=headers)
    except httpx.TimeoutException as exc:
        raise FatalLLMError(
            f"endpoint {endpoint.label} did not answer GET {url} within {client.timeout.connect}s; "
            "is the server running and is llm.endpoints[].base_url right?",
            kind="unreachable",
            endpoint=endpoint.label,
        ) from exc
    except httpx.HTTPError as exc:
        raise FatalLLMError(
            f"endpoint {endpoint.label} cannot be reached ({type(exc).__name__}: {exc}); "
            "is the server running and is llm.endpoints[].base_url right?",
            kind="unreachable",
            endpoint=endpoint.label,
        ) from exc
    if response.status_code in (401, 403):
        raise AuthError(
            f"endpoint {endpoint.label} refused the credentials (HTTP {response.status_code} on GET {url}); "
            f"check the key in env var {endpoint.api_key_env}"
            if endpoint.api_key_env
            else f"endpoint {endpoint.label} wants an API key (HTTP {response.status_code} on GET {url}); "
            "set llm.endpoints[].api_key_env",
            kind=f"http_{response.status_code}",
            endpoint=endpoint.label,
            env_var=endpoint.api_key_env,
        )
    # Any other answer (200, a 404 from a server without /models, even a 5xx) shows a live server:
    # the retry layer and the breaker deal with a server that is up but struggling.


async def probe_endpoints(llm: LLMConfig) -> None:
    """Check keys, then ``GET /models`` on every endpoint; raise on the first that cannot work."""
    check_keys(llm)
    timeout = httpx.Timeout(llm.timeouts.probe_s)
    # Plain-HTTP endpoints only: no TLS context (loading the CA bundle is start-up CPU for nothing).
    plain = all(e.base_url.lower().startswith("http:") for e in llm.endpoints)
    async with httpx.AsyncClient(timeout=timeout, verify=not plain) as client:
        for endpoint in llm.endpoints:
            await _probe(client, endpoint)
