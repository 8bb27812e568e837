"""A writer killed with SIGKILL mid-run leaves a consistent store that a resume completes without
duplicates (the full `skillharness infer` variant lives with the runner's tests)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from store_support import prediction, provenance, step

from skillharness.store import RunLog, RunReader, RunStatus

QUESTIONS = 200

_CHILD = textwrap.dedent(
    """
    import asyncio, sys
    sys.path.insert(0, {support!r})
    from store_support import prediction, provenance, step
    from skillharness.store import RunLog

    async def main():
        log = await RunLog.open({url!r}, provenance())
        for i in range({n}):
            q = f"q{{i:04d}}"
            await asyncio.gather(log.write_step(step(q, 0)), log.write_step(step(q, 1)))
            await log.write_prediction(prediction(q))
            if i == 50:
                print("half way", flush=True)
            await asyncio.sleep(0.002)
        print("finished", flush=True)

    asyncio.run(main())
    """
)


def _write_then_sigkill(url: str) -> None:
    code = _CHILD.format(support=str(Path(__file__).parent), url=url, n=QUESTIONS)
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "half way"
    os.kill(child.pid, signal.SIGKILL)
    child.wait(timeout=30)


@pytest.mark.slow
async def test_sigkill_mid_run_then_resume_gives_one_row_per_key(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    _write_then_sigkill(url)

    with RunReader(url) as reader:
        assert reader.run("run-1").status is RunStatus.RUNNING  # nobody closed it
        survived = {p.question_id for p in reader.predictions("run-1")}
        # Steps are queued, predictions awaited, the writer FIFO: a stored prediction has its steps.
        assert all(len(reader.trace("run-1", q)) == 2 for q in survived)
    assert 50 <= len(survived) < QUESTIONS

    async with await RunLog.open(url, provenance(), resume=True) as log:
        done = {q for q, _ in await log.completed_keys()}
        assert done == survived
        for i in range(QUESTIONS):  # rewrite everything, finished or not: upserts, no duplicates
            q = f"q{i:04d}"
            await asyncio.gather(log.write_step(step(q, 0)), log.write_step(step(q, 1)))
            await log.write_prediction(prediction(q))
    with RunReader(url) as reader, reader.engine.connect() as conn:
        counts = [
            conn.exec_driver_sql(f"SELECT count(*) FROM {t}").scalar_one() for t in ("predictions", "traces")
        ]
        assert counts == [QUESTIONS, 2 * QUESTIONS]
        assert reader.run("run-1").status is RunStatus.FINISHED
