"""The base for every typed boundary object: frozen, and strict about unknown fields."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class StrictModel(BaseModel):
    """Frozen pydantic model that rejects unknown keys (a typo is an error, not a default)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
