"""The ``store`` config section."""

from __future__ import annotations

from pydantic import Field

from skillharness.util.model import StrictModel


class StoreConfig(StrictModel):
    """Where runs, predictions and traces are kept."""

    url: str = Field(
        "sqlite:///.skillharness/runs.sqlite",
        description="sqlite:///path (in a config file relative to its folder, else to the working directory) "
        "or postgresql://user@host/db. "
        "Put a PostgreSQL password in PGPASSWORD or ~/.pgpass, not here.",
    )
    batch_size: int = Field(256, ge=1, description="Most records the writer commits in one transaction.")
    queue_size: int = Field(10_000, ge=1, description="Records waiting for the writer before callers wait.")
    busy_timeout_s: float = Field(
        30.0, gt=0, description="How long a SQLite connection waits for another's lock before failing."
    )
