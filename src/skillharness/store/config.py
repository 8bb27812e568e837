"""The ``store`` config section."""

from __future__ import annotations

from pydantic import Field

from skillharness.util.model import StrictModel


class StoreConfig(StrictModel):
    """Where runs, predictions and traces are kept."""

    url: str = Field("sqlite:///.skillharness/runs.sqlite", description="sqlite:///path or postgresql://...")
