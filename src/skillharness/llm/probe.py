"""A start-up probe of one endpoint: ``GET {base_url}/models`` under the run's retry policy.

Any answer but a refusal shows a live server (a 404 from a server without ``/models`` included).
A refused key is final at once; a refused or cut connection, a timeout, a 429 (its Retry-After
honoured) or a 5xx page (a gateway whose model server is away) is retried like any call, so one
hiccup at start-up does not refuse a run.
"""

from __future__ import annotations

import os

import httpx

from skillharness.errors import AuthError
from skillharness.llm.config import EndpointConfig, RetryConfig
from skillharness.llm.errors import TRANSIENT_STATUSES, error_for_status, map_httpx_error
from skillharness.llm.retry import Retrier, RetryBudget

__all__ = ["probe_models"]


async def probe_models(client: httpx.AsyncClient, endpoint: EndpointConfig, retry: RetryConfig) -> None:
    """Return once ``endpoint`` answers ``GET /models``; raise our error when it cannot.

    A refused key raises :class:`AuthError` and a bad URL a ``FatalLLMError`` at once; a failure
    that outlasts the retries raises its last ``TransientLLMError``, whose context holds
    ``attempts`` and ``gave_up``.
    """
    url = endpoint.base_url.rstrip("/") + "/models"
    # A budget of its own: a probe is one call, not the storm the shared budget guards against.
    retrier = Retrier(retry, RetryBudget.of(retry))
    await retrier.run(lambda: _attempt(client, endpoint, url), f"GET {url}")


async def _attempt(client: httpx.AsyncClient, endpoint: EndpointConfig, url: str) -> None:
    key = os.environ.get(endpoint.api_key_env, "") if endpoint.api_key_env else ""
    headers = {"Authorization": f"Bearer {key}"} if endpoint.api_key_env else {}
    try:
        response = await client.get(url, headers=headers)
    except httpx.HTTPError as exc:  # refused, timed out, cut: transient; a bad URL: fatal
        raise map_httpx_error(exc, endpoint.label) from exc
    status = response.status_code
    if status in (401, 403):
        raise AuthError(
            f"endpoint {endpoint.label} refused the credentials (HTTP {status} on GET {url}); "
            f"check the key in env var {endpoint.api_key_env}"
            if endpoint.api_key_env
            else f"endpoint {endpoint.label} wants an API key (HTTP {status} on GET {url}); "
            "set llm.endpoints[].api_key_env",
            kind=f"http_{status}",
            endpoint=endpoint.label,
            env_var=endpoint.api_key_env,
        )
    if status in TRANSIENT_STATUSES or status >= 500:
        raise error_for_status(
            status,
            response.text,
            endpoint.label,
            retry_after=response.headers.get("retry-after"),
            secrets=(key,) if key else (),  # a proxy's page may quote the Authorization header
        )
