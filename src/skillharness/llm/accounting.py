"""Tokens, calls and cost per role (agent, judge, evolve, rank, momentum, consolidate)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from skillharness.errors import LLMError
from skillharness.llm.config import RolePrice
from skillharness.llm.errors import refuses_request
from skillharness.llm.events import AttemptEvent, LLMEvent
from skillharness.llm.roles import Role
from skillharness.llm.types import ChatModel, ChatRequest, ChatResponse

__all__ = ["Accountant", "AccountingModel", "RoleUsage"]


@dataclass
class RoleUsage:
    """Running totals for one role. Cache hits cost nothing and add no tokens.

    ``errors`` counts failed attempts (an outage shows here even when every retry succeeded);
    ``failed_calls`` counts calls that ended in an error; ``refused`` those of them the server
    refused for what the request carried (a 400, 413 or 422 of ``REQUEST_REFUSALS``): a server
    set up below the run's requests shows here, role by role, however its answers are scored.
    """

    calls: int = 0
    cache_hits: int = 0
    errors: int = 0
    failed_calls: int = 0
    refused: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    latency_s: float = 0.0


class Accountant:
    """Collects :class:`RoleUsage` per role, priced by the optional per-role prices."""

    def __init__(self, prices: Mapping[Role, RolePrice] | None = None) -> None:
        self.prices = dict(prices or {})
        self.by_role: dict[Role, RoleUsage] = {role: RoleUsage() for role in Role}
        self._roles = frozenset(role.value for role in Role)

    def record(self, role: Role, response: ChatResponse) -> None:
        """Add one successful response."""
        usage = self.by_role[role]
        usage.calls += 1
        if response.cache_hit:
            usage.cache_hits += 1
            return
        usage.prompt_tokens += response.usage.prompt_tokens
        usage.completion_tokens += response.usage.completion_tokens
        usage.latency_s += response.latency_s
        price = self.prices.get(role)
        if price is not None:
            usage.cost += (
                response.usage.prompt_tokens * price.prompt_per_mtok
                + response.usage.completion_tokens * price.completion_per_mtok
            ) / 1e6

    def record_error(self, role: Role, exc: LLMError | None = None) -> None:
        """Count a call that ended in an error, and its last attempt unless an event log did."""
        usage = self.by_role[role]
        usage.calls += 1
        usage.failed_calls += 1
        if exc is not None and refuses_request(exc):
            usage.refused += 1
        if exc is None or not exc.context.get("noted"):
            usage.errors += 1

    def on_event(self, event: LLMEvent) -> None:
        """Count a failed attempt the retry layer reported (an :class:`EventLog` listener)."""
        if isinstance(event, AttemptEvent) and event.role in self._roles:
            self.by_role[Role(event.role)].errors += 1

    @property
    def total_cost(self) -> float:
        return sum(u.cost for u in self.by_role.values())

    def summary(self) -> dict[str, dict[str, float]]:
        """Plain numbers per role that was used (for reports and logs)."""
        return {role.value: vars(u).copy() for role, u in self.by_role.items() if u.calls}


class AccountingModel:
    """Outermost wrapper: sees cache hits as well as real calls."""

    def __init__(self, inner: ChatModel, accountant: Accountant) -> None:
        self.inner = inner
        self.accountant = accountant

    async def complete(self, request: ChatRequest) -> ChatResponse:
        try:
            response = await self.inner.complete(request)
        except LLMError as exc:
            self.accountant.record_error(request.role, exc)
            raise
        self.accountant.record(request.role, response)
        return response
