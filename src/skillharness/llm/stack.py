"""The composed model the rest of the harness calls, and its factory.

    AccountingModel → CachedModel → RetryingModel → Router → [BreakerModel → EndpointClient] × N

Retry sits *outside* the router so a retried attempt is routed afresh, away from the replica that
just failed when another accepts, and each breaker sees single attempts, so its half-open probe
is exactly one HTTP request. The cache sits outside retry, so only the final, complete response is
stored. Failed attempts and breaker transitions go to the stack's :class:`EventLog` (the
accountant counts the failed attempts per role; a run drains the log into its store).
"""

from __future__ import annotations

import random
from types import TracebackType

from skillharness.llm.accounting import Accountant, AccountingModel
from skillharness.llm.breaker import BreakerModel, CircuitBreaker
from skillharness.llm.cache.backend import CacheBackend
from skillharness.llm.cache.model import CachedModel
from skillharness.llm.cache.opener import open_backend
from skillharness.llm.cache.ttl import parse_ttl
from skillharness.llm.client import EndpointClient
from skillharness.llm.config import CacheConfig, LLMConfig
from skillharness.llm.events import EventLog
from skillharness.llm.retry import RetryBudget, RetryingModel
from skillharness.llm.router import Lane, Router
from skillharness.llm.types import ChatModel, ChatRequest, ChatResponse

__all__ = ["LLMStack", "build_chat_model"]


class LLMStack:
    """A :class:`ChatModel` plus handles on its layers (for stats) and one ``aclose``."""

    def __init__(
        self,
        model: ChatModel,
        *,
        accountant: Accountant,
        router: Router,
        retry: RetryingModel,
        clients: tuple[EndpointClient, ...],
        cache: CachedModel | None,
        backend: CacheBackend | None,
        events: EventLog,
    ) -> None:
        self.model = model
        self.events = events
        self.accountant = accountant
        self.router = router
        self.retry = retry
        self.clients = clients
        self.cache = cache
        self._backend = backend

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """Answer ``request`` (from the cache when possible)."""
        return await self.model.complete(request)

    async def invalidate(self, request: ChatRequest) -> None:
        """Drop ``request``'s cached response, if the stack has a cache (see CachedModel.invalidate)."""
        if self.cache is not None:
            await self.cache.invalidate(request)

    async def aclose(self) -> None:
        """Close every connection pool and the cache backend."""
        for client in self.clients:
            await client.aclose()
        if self._backend is not None:
            await self._backend.aclose()

    async def __aenter__(self) -> LLMStack:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()


def build_chat_model(
    llm: LLMConfig,
    cache: CacheConfig | None = None,
    *,
    default_salt: str | None = None,
    accountant: Accountant | None = None,
    rng: random.Random | None = None,
) -> LLMStack:
    """Compose the full model for ``llm`` with the cache of ``cache`` (None or disabled: no cache).

    ``default_salt`` is used when ``cache.salt`` is None; a training run passes its run id so
    its samples are its own, unless the config names a salt to share.
    """
    accountant = accountant or Accountant(llm.prices)
    events = EventLog()
    events.subscribe(accountant.on_event)
    clients = tuple(
        EndpointClient(ep, llm.timeouts, tool_calls_in_content=llm.tool_calls_in_content)
        for ep in llm.endpoints
    )
    lanes = []
    for client in clients:
        breaker = CircuitBreaker(client.label, llm.breaker, on_transition=events.breaker_changed)
        ep = client.endpoint
        lanes.append(Lane(client.label, BreakerModel(client, breaker), breaker, ep.max_in_flight, ep.weight))
    router = Router(lanes, rng=rng)
    retry = RetryingModel(router, llm.retry, RetryBudget.of(llm.retry), rng=rng, events=events)
    inner: ChatModel = retry
    cached = backend = None
    if cache is not None and cache.enabled:
        backend = open_backend(cache.url, cache.namespace)
        salt = cache.salt if cache.salt is not None else default_salt
        cached = CachedModel(
            retry, backend, salt=salt, ttl_s=parse_ttl(cache.ttl), flight_wait_s=cache.flight_wait_s
        )
        inner = cached
    model = AccountingModel(inner, accountant)
    return LLMStack(
        model,
        accountant=accountant,
        router=router,
        retry=retry,
        clients=clients,
        cache=cached,
        backend=backend,
        events=events,
    )
