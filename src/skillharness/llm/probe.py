"""A start-up probe of one endpoint: ``GET {base_url}/models`` under the run's retry policy.

Any answer but a refusal shows a live server (a 404 from a server without ``/models`` included),
and its listing (OpenAI's ``{"data": [{"id": ...}]}``) says which model names it serves. A
refused key is final at once. A timeout, a 429 (its Retry-After honoured), a cut connection or a
5xx page (a gateway whose model server is away) is retried like any call, so one hiccup at
start-up does not refuse a run.

A refused connection is different: nothing listens on that port. A server that is starting
refuses for a moment at most, so it gets :data:`REFUSED_ATTEMPTS` quick attempts
:data:`REFUSED_PAUSE_S` apart (about a second in all), and then the probe fails naming the URL,
instead of spending the whole retry policy (about 40 s with the defaults) on a port no one serves.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass

import httpx

from skillharness.errors import AuthError, FatalLLMError, TransientLLMError
from skillharness.llm.config import EndpointConfig, RetryConfig
from skillharness.llm.errors import TRANSIENT_STATUSES, error_for_status, map_httpx_error
from skillharness.llm.retry import Retrier, RetryBudget

__all__ = ["REFUSED_ATTEMPTS", "REFUSED_PAUSE_S", "ModelListing", "probe_models"]

REFUSED_ATTEMPTS = 3  # connection attempts a refusing port gets before the probe gives up
REFUSED_PAUSE_S = 0.5  # between them: long enough for a restarting server to bind its port again
_REFUSED_KIND = "connect_error"  # httpx.ConnectError: refused, or no route / no such host


@dataclass(frozen=True)
class ModelListing:
    """What ``GET /models`` said: the model ids it lists, or why it listed none.

    ``ids`` is empty when the server gave no usable listing; ``unlisted`` then says why (``HTTP
    404``, ``an empty list``, ...), so a caller can say that the model name was not checked.
    """

    url: str
    ids: tuple[str, ...] = ()
    unlisted: str | None = None

    @property
    def known(self) -> bool:
        """The server listed its models: a name missing from ``ids`` is not served by that name."""
        return self.unlisted is None


async def probe_models(
    client: httpx.AsyncClient, endpoint: EndpointConfig, retry: RetryConfig
) -> ModelListing:
    """Return what ``endpoint`` lists on ``GET /models``; raise our error when it does not answer.

    A refused key raises :class:`AuthError` and a bad URL a ``FatalLLMError`` at once; a port
    that refuses :data:`REFUSED_ATTEMPTS` connections in a row raises a ``FatalLLMError`` of kind
    ``connection_refused`` naming the URL; any other failure that outlasts the retries raises its
    last ``TransientLLMError``, whose context holds ``attempts`` and ``gave_up``.
    """
    url = endpoint.base_url.rstrip("/") + "/models"
    # A budget of its own: a probe is one call, not the storm the shared budget guards against.
    retrier = Retrier(retry, RetryBudget.of(retry))
    return await retrier.run(lambda: _refusals_bounded(client, endpoint, url), f"GET {url}")


async def _refusals_bounded(client: httpx.AsyncClient, endpoint: EndpointConfig, url: str) -> ModelListing:
    """One attempt of the retry policy, in which a refused connection is tried again only briefly."""
    refused = 0
    while True:
        try:
            return await _attempt(client, endpoint, url)
        except TransientLLMError as exc:
            if exc.context.get("kind") != _REFUSED_KIND:
                raise
            refused += 1
            if refused == REFUSED_ATTEMPTS:
                raise FatalLLMError(
                    f"endpoint {endpoint.label} refuses connections: nothing accepts them at {url} "
                    f"({REFUSED_ATTEMPTS} attempts {REFUSED_PAUSE_S:g} s apart); is the server running, "
                    "and is llm.endpoints[].base_url (host and port) right?",
                    kind="connection_refused",
                    endpoint=endpoint.label,
                    url=url,
                    attempts=REFUSED_ATTEMPTS,
                ) from exc
        await asyncio.sleep(REFUSED_PAUSE_S)


async def _attempt(client: httpx.AsyncClient, endpoint: EndpointConfig, url: str) -> ModelListing:
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
    return _listing(url, response)


def _listing(url: str, response: httpx.Response) -> ModelListing:
    """The ids of OpenAI's ``{"data": [{"id": ...}, ...]}``, or why there are none."""
    if response.status_code != 200:
        return ModelListing(url, unlisted=f"HTTP {response.status_code}")
    try:
        data = response.json()["data"]
        ids = tuple(str(item["id"]) for item in data)
    except (ValueError, KeyError, TypeError):
        return ModelListing(url, unlisted="not OpenAI's list format ({'data': [{'id': ...}]})")
    return ModelListing(url, ids) if ids else ModelListing(url, unlisted="an empty list")
