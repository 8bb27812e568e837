"""The ``llm`` and ``cache`` config sections.

Every field is documented; unknown keys are rejected (``StrictModel``). The API key itself is
never part of the config: only the *name* of the environment variable that holds it, read at
call time.
"""

from __future__ import annotations

from enum import StrEnum
from urllib.parse import urlsplit

from pydantic import Field, field_validator, model_validator

from skillharness.errors import ConfigError
from skillharness.llm.cache.ttl import parse_ttl
from skillharness.llm.media import MediaConfig
from skillharness.llm.roles import Role
from skillharness.util.model import StrictModel

__all__ = [
    "BreakerConfig",
    "CacheConfig",
    "EndpointConfig",
    "LLMConfig",
    "OpenBehaviour",
    "RetryConfig",
    "RolePrice",
    "TimeoutConfig",
]


class EndpointConfig(StrictModel):
    """One OpenAI-compatible server. The key itself is never in config: only the env var's name."""

    base_url: str = Field(description="e.g. http://127.0.0.1:8000/v1 (the path before /chat/completions).")
    api_key_env: str | None = Field(
        None, description="Name of the env var holding the API key; None sends no Authorization header."
    )
    max_in_flight: int = Field(24, ge=1, description="Concurrent requests to this endpoint.")
    weight: float = Field(
        1.0,
        gt=0,
        le=1000,
        description="This replica's share of the calls relative to the others (a replica of weight 2 "
        "gets about twice the calls of one of weight 1, and twice the pairs of draws).",
    )
    name: str | None = Field(None, description="Label used in logs and errors; defaults to base_url.")
    send_sample_idx: bool = Field(
        True,
        description="Send a request's sample index > 0 as top-level body key 'sample_idx' (the simulator "
        "draws a fresh sample per index when the request samples; vLLM, SGLang and llama.cpp ignore it; "
        "set false for a hosted API that rejects unknown keys).",
    )
    media: MediaConfig = Field(
        default_factory=MediaConfig,
        description="How the first message's frames reach this server (transport images, video_frames or "
        "video_url; docs/agent.md, 'How frames reach the model').",
    )

    @property
    def label(self) -> str:
        """How logs, errors and responses name this endpoint."""
        return self.name or self.base_url

    @field_validator("base_url")
    @classmethod
    def _url_is_usable(cls, value: str) -> str:
        """An absolute http(s) URL with a host and a real port: a typo is refused before the run."""
        parts = urlsplit(value.strip())
        if parts.scheme not in ("http", "https"):
            # 'localhost:8000/v1' parses with scheme 'localhost': only '<scheme>://' names one.
            if parts.scheme and value.strip().lower().startswith(f"{parts.scheme}://"):
                raise ValueError(f"{value!r} has scheme {parts.scheme!r}; an endpoint is http:// or https://")
            raise ValueError(f"{value!r} needs a scheme: write http://{value} or https://{value}")
        try:
            port = parts.port
        except ValueError as exc:
            raise ValueError(f"{value!r} has an invalid port: {exc}") from exc
        if not parts.hostname:
            raise ValueError(f"{value!r} names no host")
        if port == 0:
            raise ValueError(f"{value!r} names port 0, which no server listens on")
        return value.strip()


class TimeoutConfig(StrictModel):
    """httpx per-phase timeouts plus a total deadline per attempt (a slow drip never ends otherwise)."""

    connect_s: float = Field(10.0, gt=0, description="Establishing the TCP connection.")
    read_s: float = Field(120.0, gt=0, description="Longest wait for the next bytes (first byte included).")
    write_s: float = Field(30.0, gt=0, description="Longest wait to send the request body.")
    pool_s: float = Field(30.0, gt=0, description="Longest wait for a free connection from the pool.")
    total_s: float = Field(600.0, gt=0, description="Whole attempt, from sending to the last SSE frame.")
    probe_s: float = Field(
        5.0,
        gt=0,
        description="Each attempt of the start-up check of an endpoint (GET {base_url}/models); transient "
        "failures are retried under llm.retry.",
    )


class RetryConfig(StrictModel):
    """Retries of transient failures: capped per call and, globally, by a budget."""

    max_attempts: int = Field(8, ge=1, description="Attempts per call, the first included.")
    base_delay_s: float = Field(0.5, gt=0, description="Backoff scale: attempt n sleeps U(0, base*2^(n-1)).")
    max_delay_s: float = Field(30.0, gt=0, description="Cap of one exponential backoff sleep.")
    retry_after_cap_s: float = Field(120.0, gt=0, description="Cap of a server's Retry-After.")
    max_elapsed_s: float = Field(
        1800.0, gt=0, description="Total deadline of one call over all its attempts and sleeps."
    )
    budget_share: float = Field(
        0.5,
        ge=0,
        le=10,
        description="Retries may not exceed this share of the calls in the window (a retry the server "
        "asked for with Retry-After is not counted).",
    )
    budget_window_s: float = Field(60.0, gt=0, description="The sliding window of 'recent calls'.")
    budget_floor: int = Field(
        10, ge=0, description="Retries always allowed per window, so a quiet run can still retry."
    )


class OpenBehaviour(StrEnum):
    """What a caller does when its endpoint's breaker is open (or half-open with a probe out)."""

    WAIT = "wait"  # pause until the endpoint recovers, up to breaker.wait_deadline_s
    FAIL_FAST = "fail_fast"  # raise CircuitOpenError at once


class BreakerConfig(StrictModel):
    """A per-endpoint circuit breaker: closed → open → half-open (exactly one probe) → closed."""

    failure_threshold: int = Field(
        10,
        ge=1,
        description="Consecutive transient failures that open it (at a 30 % transient rate 5 in a row come "
        "every ~400 attempts, 10 every ~170,000; an outage fails every call and opens it at once).",
    )
    cooldown_s: float = Field(10.0, gt=0, description="Time open before one probe is let through.")
    on_open: OpenBehaviour = Field(
        OpenBehaviour.WAIT, description="'wait' pauses callers (an outage pauses the run); 'fail_fast'."
    )
    wait_deadline_s: float = Field(
        900.0, gt=0, description="Longest a caller waits for an open endpoint before CircuitOpenError."
    )


class RolePrice(StrictModel):
    """Price of tokens for one role, for cost accounting (any currency; reports say 'cost')."""

    prompt_per_mtok: float = Field(0.0, ge=0, description="Cost of one million prompt tokens.")
    completion_per_mtok: float = Field(0.0, ge=0, description="Cost of one million completion tokens.")


class LLMConfig(StrictModel):
    """The model endpoints and how calls to them are made."""

    model: str = Field("sim-vl", description="Model name sent in every request.")
    endpoints: tuple[EndpointConfig, ...] = Field(
        (EndpointConfig(base_url="http://127.0.0.1:8000/v1"),),
        min_length=1,
        description="Replicas serving the model (interchangeable: adding or removing one does not block "
        "a resume); calls go to the least-loaded healthy one, both arms of a paired draw to one replica.",
    )
    timeouts: TimeoutConfig = Field(default_factory=TimeoutConfig, description="Per-attempt timeouts.")
    retry: RetryConfig = Field(default_factory=RetryConfig, description="Retry policy and budget.")
    breaker: BreakerConfig = Field(default_factory=BreakerConfig, description="Per-endpoint breaker.")
    prices: dict[Role, RolePrice] = Field(
        default_factory=dict, description="Optional token prices per role; absent roles cost 0."
    )
    tool_calls_in_content: bool = Field(
        False,
        description="Accept a tool call written as bare JSON in 'content' (small llama.cpp models do).",
    )

    @model_validator(mode="after")
    def _one_media(self) -> LLMConfig:
        # A request is built (frames and all) before the router picks its replica, so every replica
        # must take the same shape; a mixed list would send some requests to a server that cannot
        # read them.
        kinds = {endpoint.media for endpoint in self.endpoints}
        if len(kinds) > 1:
            named = "; ".join(
                f"{e.label}: {e.media.model_dump(mode='json', exclude_defaults=True) or 'images'}"
                for e in self.endpoints
            )
            raise ValueError(
                f"the endpoints disagree on media ({named}); replicas of one model must take frames the "
                "same way: give every endpoint the same llm.endpoints[].media"
            )
        return self

    @property
    def media(self) -> MediaConfig:
        """How frames reach the model: the one media setting every endpoint shares."""
        return self.endpoints[0].media


class CacheConfig(StrictModel):
    """The response cache."""

    enabled: bool = Field(True, description="False bypasses the cache entirely.")
    url: str = Field(
        "sqlite:///.skillharness/cache.sqlite",
        description="sqlite:///relative/path, sqlite:////absolute/path, or redis://host:port/db.",
    )
    ttl: str = Field(
        "never", description="'never' or a positive duration like '7d', '12h', '30m'. No magic 0."
    )
    salt: str | None = Field(
        None, description="Mixed into every key; None lets the caller (a training run) supply its own."
    )
    share_across_runs: bool | None = Field(
        None,
        description="Let a run reuse responses cached by other runs, and a training run's gates "
        "the incumbent samples other runs left in the BaselineCache. None: only at temperature 0 "
        "(a replay is then the same answer); true: always (printed in the summary); false: never "
        "(each run's key salt is its run id, so a resume still reuses its own responses).",
    )
    namespace: str = Field(
        "skillharness", pattern=r"^[A-Za-z0-9_.-]+$", description="Key prefix; 'cache clear' removes only it."
    )
    flight_wait_s: float = Field(
        60.0,
        ge=0,
        description="Redis: how long a process waits for another process asking the same request "
        "(single-flight) before asking itself; a crashed asker delays the others at most this long. "
        "0: never wait.",
    )

    @field_validator("ttl", mode="before")
    @classmethod
    def _ttl_is_not_a_bare_number(cls, value: object) -> object:
        # YAML reads `ttl: 0` or `ttl: 3600` as a number; say what to write instead of "not a string".
        if isinstance(value, int | float) and not isinstance(value, bool):
            raise ValueError(
                f"a bare number ({value!r}) is not a ttl: write 'never' for entries that never expire, "
                "or a duration with its unit such as '3600s', '12h' or '7d'"
            )
        return value

    @field_validator("ttl")
    @classmethod
    def _ttl_parses(cls, value: str) -> str:
        try:
            parse_ttl(value)
        except ConfigError as exc:  # pydantic reports a ValueError with the key path
            raise ValueError(str(exc)) from exc
        return value
