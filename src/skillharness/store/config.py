"""The ``store`` config section."""

from __future__ import annotations

from pydantic import Field, model_validator

from skillharness.util.model import StrictModel


class StoreConfig(StrictModel):
    """Where runs, predictions and traces are kept."""

    url: str = Field(
        "sqlite:///.skillharness/runs.sqlite",
        description="sqlite:///path (a relative path in a config file resolves against the file's "
        "folder, not the working directory) or postgresql://user@host/db. "
        "Put a PostgreSQL password in PGPASSWORD or ~/.pgpass, not here.",
    )
    batch_size: int = Field(256, ge=1, description="Most records the writer commits in one transaction.")
    queue_size: int = Field(10_000, ge=1, description="Records waiting for the writer before callers wait.")
    busy_timeout_s: float = Field(
        30.0, gt=0, description="How long a SQLite connection waits for another's lock before failing."
    )
    lease_expiry_s: float = Field(
        30.0,
        gt=0,
        description="A run's lease is void this long after its writer's last heartbeat (a holder on a "
        "crashed machine blocks a resume at most this long).",
    )
    lease_heartbeat_s: float = Field(
        10.0, gt=0, description="How often a running writer renews its lease (below lease_expiry_s)."
    )
    host: str | None = Field(
        None,
        min_length=1,
        description="This machine's name in run leases; None: its hostname. Set it when machines "
        "(containers) share a hostname but not their processes.",
    )

    @model_validator(mode="after")
    def _heartbeat_within_expiry(self) -> StoreConfig:
        if self.lease_heartbeat_s >= self.lease_expiry_s:
            raise ValueError(
                f"store.lease_heartbeat_s ({self.lease_heartbeat_s}) must be below store.lease_expiry_s "
                f"({self.lease_expiry_s}), or a live writer's lease would lapse between heartbeats"
            )
        return self
