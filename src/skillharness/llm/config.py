"""The ``llm`` and ``cache`` config sections."""

from __future__ import annotations

from pydantic import Field

from skillharness.util.model import StrictModel


class EndpointConfig(StrictModel):
    """One OpenAI-compatible server. The key itself is never in config: only the env var's name."""

    base_url: str = Field(description="e.g. http://127.0.0.1:8000/v1")
    api_key_env: str | None = Field(None, description="Name of the env var holding the API key.")
    max_in_flight: int = Field(24, ge=1, description="Concurrent requests to this endpoint.")


class LLMConfig(StrictModel):
    """The model endpoints and how calls to them are made."""

    model: str = Field("sim-vl", description="Model name sent in every request.")
    endpoints: tuple[EndpointConfig, ...] = Field(
        (EndpointConfig(base_url="http://127.0.0.1:8000/v1"),), min_length=1
    )


class CacheConfig(StrictModel):
    """The response cache."""

    url: str = Field("sqlite:///.skillharness/cache.sqlite", description="sqlite:///path or redis://host:port/db")
    ttl: str = Field("never", description="'never' or a duration like '7d', '12h', '30m'. No magic 0.")
    salt: str | None = Field(None, description="Mixed into every key; training runs get one automatically.")
