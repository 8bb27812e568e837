"""One writer per run (issue: two processes could write one run): a per-run lease in the store."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
import sqlalchemy
from store_support import prediction, provenance

from skillharness.errors import StoreError
from skillharness.store import RunLog, RunStatus, RunStore, StoreConfig
from skillharness.store.engine import parse_store_url
from skillharness.store.lease import LEASE_METRIC, Lease

_HOLDER = textwrap.dedent(
    """
    import asyncio, sys
    sys.path.insert(0, sys.argv[2])
    from store_support import provenance
    from skillharness.store import RunLog

    async def main():
        log = await RunLog.open(sys.argv[1], provenance("leased"))
        print("open", flush=True)
        await asyncio.sleep(600)

    asyncio.run(main())
    """
)


def _lease(path: Path) -> dict[str, object] | None:
    with sqlite3.connect(path) as conn:
        row = conn.execute(
            "SELECT value FROM run_metrics WHERE run_id = 'leased' AND name = ?", (LEASE_METRIC,)
        ).fetchone()
    return json.loads(row[0]) if row else None


async def test_a_second_writer_of_a_live_run_is_refused_with_the_owner(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    first = await RunLog.open(url, provenance("leased"))
    with pytest.raises(StoreError, match=rf"being written by pid {os.getpid()} on ") as info:
        await RunLog.open(url, provenance("leased"), resume=True)
    assert info.value.context["pid"] == os.getpid()
    await first.write_prediction(prediction("q1", run_id="leased"))
    await first.close(RunStatus.INTERRUPTED)
    assert _lease(tmp_path / "runs.sqlite") is None  # released on close
    second = await RunLog.open(url, provenance("leased"), resume=True)  # now it may resume
    await second.close()


def test_a_killed_writers_lease_does_not_block_a_resume(tmp_path: Path) -> None:
    """kill -9 leaves the lease behind; its holder is a dead process of this host, so it is void."""
    store = tmp_path / "runs.sqlite"
    support = str(Path(__file__).parent)
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, f"sqlite:///{store}", support], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "open"
        held = _lease(store)
        assert held is not None
        assert held["pid"] == holder.pid
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait(timeout=30)
    finally:
        if holder.poll() is None:
            holder.kill()

    # Before the resume, a reader shows the run as stored (running) and that its writer is gone.
    shown = subprocess.run(
        [sys.executable, "-m", "skillharness.cli", "runs", "list", "--store", f"sqlite:///{store}"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "COLUMNS": "160"},
    )
    assert re.search(r"leased\s+│\s+infer\s+│\s+val\s+│\s+running \(writer gone\)", shown.stdout), (
        shown.stdout
    )

    async def resume() -> None:
        log = await RunLog.open(f"sqlite:///{store}", provenance("leased"), resume=True)
        await log.close()

    asyncio.run(resume())
    assert _lease(store) is None


# A writer on another machine: its own host name, a short expiry, a fast heartbeat.
_OTHER_HOST = textwrap.dedent(
    """
    import asyncio, sys
    sys.path.insert(0, sys.argv[2])
    from store_support import provenance
    from skillharness.store import RunLog, StoreConfig

    async def main():
        config = StoreConfig(url=sys.argv[1], host="node-a", lease_expiry_s=1.5, lease_heartbeat_s=0.2)
        log = await RunLog.open(config, provenance("leased"))
        print("open", flush=True)
        await asyncio.sleep(600)

    asyncio.run(main())
    """
)


def _on(host: str, url: str, **changes: float) -> StoreConfig:
    return StoreConfig(url=url, host=host, **{"lease_expiry_s": 1.5, "lease_heartbeat_s": 0.2, **changes})


async def test_p4_a_live_writer_on_another_host_is_refused_naming_host_pid_and_heartbeat_age(
    store_url: str,
) -> None:
    """Its heartbeat keeps the lease past its expiry: still refused after twice the expiry."""
    first = await RunLog.open(_on("node-a", store_url), provenance("leased"))
    try:
        await asyncio.sleep(3.0)  # two expiries: only the heartbeat keeps the lease alive
        with pytest.raises(StoreError) as info:
            await RunLog.open(_on("node-b", store_url), provenance("leased"), resume=True)
        message = str(info.value)
        assert f"pid {os.getpid()} on host node-a" in message
        assert re.search(r"last heartbeat is 0\.\d s old", message), message
        assert "if node-a has crashed, retry once the lease has expired" in message
        assert info.value.context["host"] == "node-a"
        assert info.value.context["heartbeat_age_s"] < 1.5
    finally:
        await first.close(RunStatus.INTERRUPTED)
    assert first._heartbeat is not None
    assert first._heartbeat.done()  # the heartbeat stopped with the run


@pytest.mark.slow
def test_p4_an_expired_lease_from_a_crashed_other_host_is_void_and_says_so(
    store_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """kill -9 of a writer on node-a: its pid means nothing on node-b, only its heartbeat's age does."""
    support = str(Path(__file__).parent)
    holder = subprocess.Popen(
        [sys.executable, "-c", _OTHER_HOST, store_url, support], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "open"
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait(timeout=30)
    finally:
        if holder.poll() is None:
            holder.kill()

    async def resume() -> str | None:
        with pytest.raises(StoreError, match=rf"pid {holder.pid} on host node-a"):  # not yet expired
            await RunLog.open(_on("node-b", store_url), provenance("leased"), resume=True)
        await asyncio.sleep(1.8)
        log = await RunLog.open(_on("node-b", store_url), provenance("leased"), resume=True)
        await log.close()
        return log.lease_note

    with caplog.at_level(logging.WARNING, logger="skillharness.store.lease"):
        note = asyncio.run(resume())
    assert note is not None
    assert f"the lease of pid {holder.pid} on host node-a is void" in note
    assert re.search(r"last heartbeat is \d\.\d s old, past its 2 s expiry", note), note
    assert note in caplog.text


async def test_p4_same_host_dead_pid_is_void_at_once_even_before_expiry(store_url: str) -> None:
    """A lease naming this host and a pid that no longer runs is void without waiting for expiry."""
    dead = await asyncio.create_subprocess_exec(sys.executable, "-c", "pass")
    await dead.wait()
    ghost = Lease("leased", expiry_s=600.0, host="node-a", pid=dead.pid)
    first = await RunLog.open(_on("node-a", store_url, lease_expiry_s=600.0), provenance("leased"))
    await first.close(RunStatus.INTERRUPTED)
    engine = sqlalchemy.create_engine(parse_store_url(store_url).url)
    with engine.begin() as conn:
        ghost.acquire(conn)
    engine.dispose()
    log = await RunLog.open(_on("node-a", store_url), provenance("leased"), resume=True)
    await log.close()
    assert log.lease_note is not None
    assert f"pid {dead.pid} on host node-a is void" in log.lease_note
    assert "no longer runs" in log.lease_note


async def test_a_renewal_in_flight_at_close_cannot_take_the_released_lease_back(store_url: str) -> None:
    """Cancelling the heartbeat does not stop its renewal's thread. A renewal that landed after
    close() released the lease took it back, and a resume in this very process was then refused
    until the lease expired: close() now waits for it."""
    first = await RunLog.open(_on("node-a", store_url), provenance("leased"))
    refresh = first._tables.lease  # the heartbeat's collaborator, slowed down so close() meets it

    renewing = threading.Event()

    def slow(op: str) -> object:
        if op == "refresh":
            renewing.set()
            time.sleep(0.6)
        return refresh(op)

    first._tables.lease = slow  # type: ignore[method-assign]
    assert await asyncio.to_thread(renewing.wait, 5.0)
    await first.close(RunStatus.INTERRUPTED)
    await asyncio.sleep(0.8)  # past where an unawaited renewal would have landed
    resumed = await RunLog.open(_on("node-a", store_url), provenance("leased"), resume=True)
    await resumed.close()


def test_p4_a_heartbeat_at_or_past_the_expiry_is_refused() -> None:
    with pytest.raises(ValueError, match="lease_heartbeat_s"):
        StoreConfig(lease_expiry_s=10, lease_heartbeat_s=10)


async def test_an_open_cancelled_while_its_thread_takes_the_lease_leaves_no_lease(tmp_path: Path) -> None:
    """A rollout cancelled by its sibling arm (a TaskGroup) may be cancelled while the open's thread
    is taking the lease; the thread finishes anyway, and the lease it took must be released, or
    this very process is refused when it resumes the run."""
    path = tmp_path / "runs.sqlite"
    url = f"sqlite:///{path}"
    first = await RunLog.open(url, provenance("leased"))
    await first.close(RunStatus.INTERRUPTED)
    store = RunStore.open(url)  # as a training run opens its children: the store is migrated
    blocker = sqlite3.connect(path, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")  # the open's write waits on this lock (busy timeout)
    opening = asyncio.create_task(store.open_run(provenance("leased"), resume=True))
    await asyncio.sleep(0.3)  # the open's thread is now waiting for the lock
    opening.cancel()
    await asyncio.sleep(0.05)
    blocker.execute("COMMIT")  # let the thread finish: it takes the lease
    blocker.close()
    with pytest.raises(asyncio.CancelledError):
        await opening
    for _ in range(20):  # the old code's thread took the lease a moment after the cancel returned
        assert _lease(path) is None
        await asyncio.sleep(0.05)
    again = await store.open_run(provenance("leased"), resume=True)  # not refused by our own pid
    await again.close()
    store.close()


async def test_a_close_cancelled_midway_still_releases_the_lease(tmp_path: Path) -> None:
    """A rollout is cancelled while it closes its run when its sibling arm fails (a TaskGroup). A
    close cut short at its first wait left the lease held by this live process, nobody renewing or
    releasing it, and the gate's resume in this very process was refused for the lease's expiry."""
    url = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    first = await RunLog.open(url, provenance("leased"))
    await first.write_prediction(prediction("q1", run_id="leased"))
    closing = asyncio.create_task(first.close())
    await asyncio.sleep(0)  # the close is now waiting inside (heartbeat, writer or the final row)
    closing.cancel()
    with pytest.raises(asyncio.CancelledError):
        await closing
    assert _lease(tmp_path / "runs.sqlite") is None
    resumed = await RunLog.open(url, provenance("leased"), resume=True)  # not refused by our own pid
    assert await resumed.completed_keys() == {("q1", 0)}
    await resumed.close()
