"""A per-run lease: one writer per run at a time (a second ``--resume`` is refused, not doubled).

The lease is a ``run_metrics`` row named ``lease`` holding its owner (host, pid, a token) and its
heartbeat (when it was last renewed, and when it expires). It is taken in the transaction that
opens the run, renewed by the writer while it runs and dropped when it closes. A lease whose
holder died is void: at once when the holder was a process of this host that no longer exists
(a ``kill -9`` never blocks a resume), else once its heartbeat is older than its expiry (a crashed
other machine blocks a resume at most ``store.lease_expiry_s``). Ages are read on the clocks of
the machines involved, so their clocks must agree to well within the expiry (NTP does).
"""

from __future__ import annotations

import json
import logging
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

__all__ = ["LEASE_METRIC", "Lease", "LeaseLost", "writer_gone"]

log = logging.getLogger(__name__)

LEASE_METRIC = "lease"


class LeaseLost(StoreError):
    """Another writer took this run's lease (this one's heartbeat had lapsed past its expiry)."""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True


def writer_gone(run_id: str, metrics: list[RunMetric]) -> str | None:
    """Why the run stored as ``running`` with these ``metrics`` has no live writer (killed, its
    status never closed), or None while one holds its lease: what a reader shows beside it."""
    held = [m.value for m in metrics if m.run_id == run_id and m.name == LEASE_METRIC]
    if not held:
        return f"run {run_id!r} holds no lease: no writer is recording it"
    if not isinstance(held[0], dict):
        return f"run {run_id!r}: its lease is unreadable"
    return Lease(run_id)._void_reason(held[0])


@dataclass(frozen=True)
class Lease:
    """This process's claim on one run; ``host`` None is this machine's hostname."""

    run_id: str
    expiry_s: float = 30.0
    host: str = field(default_factory=socket.gethostname)
    pid: int = field(default_factory=os.getpid)
    token: str = field(default_factory=lambda: secrets.token_hex(8))

    def _value(self) -> dict[str, Any]:
        now = time.time()
        return {
            "host": self.host,
            "pid": self.pid,
            "token": self.token,
            "heartbeat_at": now,
            "expires_at": now + self.expiry_s,
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

    def acquire(self, conn: Connection) -> str | None:
        """Take the lease in the caller's transaction.

        Returns why a lease left behind was void (None when there was none), and logs it.

        Raises:
            StoreError: a live writer holds it; the message names its host, pid and heartbeat age.
        """
        held = self._held(conn)
        note = None
        if held is not None and held.get("token") != self.token:
            note = self._void_reason(held)
            if note is None:
                raise self._refusal(held)
            log.warning("%s", note)
        self._write(conn)
        return note

    def _void_reason(self, held: dict[str, Any]) -> str | None:
        """Why the lease ``held`` by another writer is void, or None when it is live."""
        who = f"pid {held.get('pid')} on host {held.get('host')}"
        age = time.time() - float(held.get("heartbeat_at", 0))
        expires_at = float(held.get("expires_at", 0))
        if held.get("host") == self.host and isinstance(held.get("pid"), int) and not _alive(held["pid"]):
            return f"run {self.run_id!r}: the lease of {who} is void: that process no longer runs"
        if expires_at < time.time():
            expiry = expires_at - float(held.get("heartbeat_at", expires_at))
            return (
                f"run {self.run_id!r}: the lease of {who} is void: its last heartbeat is {age:.1f} s old, "
                f"past its {expiry:.0f} s expiry (its machine crashed or lost the store); taking it over"
            )
        return None

    def _refusal(self, held: dict[str, Any]) -> StoreError:
        host, pid = held.get("host"), held.get("pid")
        now = time.time()
        age = now - float(held.get("heartbeat_at", now))
        left = float(held.get("expires_at", now)) - now
        where = f"this host ({host})" if host == self.host else f"host {host}"
        return StoreError(
            f"run {self.run_id!r} is being written by pid {pid} on {where}: its last heartbeat is "
            f"{age:.1f} s old and it expires in {left:.1f} s unless renewed; wait for it to end "
            "(or stop it), then resume it or choose another run id"
            + ("" if host == self.host else f"; if {host} has crashed, retry once the lease has expired"),
            run_id=self.run_id,
            pid=pid,
            host=host,
            heartbeat_age_s=round(age, 1),
        )

    def refresh(self, conn: Connection) -> None:
        """Renew the lease (the writer's heartbeat).

        Raises:
            LeaseLost: another writer took the lease after this one's heartbeat lapsed.
        """
        held = self._held(conn)
        if held is not None and held.get("token") != self.token:
            raise LeaseLost(
                f"run {self.run_id!r}: this writer's lease was taken over by pid {held.get('pid')} on "
                f"host {held.get('host')} after its heartbeat lapsed; stop this process",
                run_id=self.run_id,
                pid=held.get("pid"),
                host=held.get("host"),
            )
        self._write(conn)

    def release(self, conn: Connection) -> None:
        held = self._held(conn)
        if held is not None and held.get("token") == self.token:
            conn.execute(
                delete(run_metrics).where(
                    run_metrics.c.run_id == self.run_id, run_metrics.c.name == LEASE_METRIC
                )
            )
