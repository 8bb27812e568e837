"""One writer per run (issue: two processes could write one run): a per-run lease in the store."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from store_support import prediction, provenance

from skillharness.errors import StoreError
from skillharness.store import RunLog, RunStatus
from skillharness.store.lease import LEASE_METRIC

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

    async def resume() -> None:
        log = await RunLog.open(f"sqlite:///{store}", provenance("leased"), resume=True)
        await log.close()

    asyncio.run(resume())
    assert _lease(store) is None
