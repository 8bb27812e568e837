"""A per-run lease: one writer per run at a time (a second ``--resume`` is refused, not doubled).

The lease is a ``run_metrics`` row named ``lease`` holding its owner (host, pid, a token), taken in
the transaction that opens the run, refreshed by the writer while it runs and dropped when it
closes. A lease whose holder died expires: at once when the holder was a process of this host
that no longer exists (a ``kill -9`` never blocks a resume), else after ``LEASE_TTL_S``.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import time
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection, delete, select

from skillharness.errors import StoreError
from skillharness.store.ledger import RunMetric
from skillharness.store.rows import now_iso
from skillharness.store.schema import run_metrics
from skillharness.store.upsert import upsert_statement

__all__ = ["LEASE_METRIC", "LEASE_TTL_S", "Lease"]

LEASE_METRIC = "lease"
LEASE_TTL_S = 30.0


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True


@dataclass(frozen=True)
class Lease:
    """This process's claim on one run."""

    run_id: str
    host: str = field(default_factory=socket.gethostname)
    pid: int = field(default_factory=os.getpid)
    token: str = field(default_factory=lambda: secrets.token_hex(8))

    def _value(self) -> dict[str, Any]:
        return {
            "host": self.host,
            "pid": self.pid,
            "token": self.token,
            "expires_at": time.time() + LEASE_TTL_S,
        }

    def _write(self, conn: Connection) -> None:
        row = RunMetric(run_id=self.run_id, name=LEASE_METRIC, value=self._value()).row(now_iso())
        conn.execute(upsert_statement(conn.dialect.name, run_metrics, tuple(row)), [row])

    def _held(self, conn: Connection) -> dict[str, Any] | None:
        query = select(run_metrics.c.value).where(
            run_metrics.c.run_id == self.run_id, run_metrics.c.name == LEASE_METRIC
        )
        raw = conn.execute(query).scalar_one_or_none()
        value = json.loads(raw) if raw else None
        return value if isinstance(value, dict) else None

    def acquire(self, conn: Connection) -> None:
        """Take the lease in the caller's transaction; StoreError naming the holder when it is taken."""
        held = self._held(conn)
        if held is not None and held.get("token") != self.token and self._live(held):
            raise StoreError(
                f"run {self.run_id!r} is being written by pid {held.get('pid')} on {held.get('host')}; "
                "wait for it to end (or stop it) before resuming",
                run_id=self.run_id,
                pid=held.get("pid"),
                host=held.get("host"),
            )
        self._write(conn)

    def _live(self, held: dict[str, Any]) -> bool:
        if float(held.get("expires_at", 0)) < time.time():
            return False
        if held.get("host") == self.host and isinstance(held.get("pid"), int):
            return _alive(held["pid"])
        return True

    def refresh(self, conn: Connection) -> None:
        """Extend the lease (the writer calls this while the run is open)."""
        held = self._held(conn)
        if held is None or held.get("token") == self.token:
            self._write(conn)

    def release(self, conn: Connection) -> None:
        held = self._held(conn)
        if held is not None and held.get("token") == self.token:
            conn.execute(
                delete(run_metrics).where(
                    run_metrics.c.run_id == self.run_id, run_metrics.c.name == LEASE_METRIC
                )
            )
