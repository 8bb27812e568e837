"""RunReader: read-only by construction (audit P2-2)."""

from __future__ import annotations

import inspect
import sqlite3
from pathlib import Path

import pytest
import sqlalchemy as sa
from store_support import prediction, provenance, step

from skillharness.errors import StoreError
from skillharness.infer.scoring import raw_answers
from skillharness.store import RunLog, RunReader, StepRole

_READ_METHODS = {
    "runs",
    "run",
    "predictions",
    "replica_changes",
    "status_counts",
    "trace",
    "iter_traces",
    "close",
    "engine",
    "ledger",
    "children",
    "settings",
}


async def _store_with_a_run(url: str) -> None:
    async with await RunLog.open(url, provenance()) as log:
        await log.write_step(step("q0", 0, subtitles_shown=("[2.0s] «Ünïcode» line",)))
        await log.write_step(
            step("q0", 1, tool_name="get_frames", tool_arguments='{"start_s": 1, "end_s": 2}')
        )
        await log.write_prediction(prediction("q0"))


async def test_p2_2_reader_cannot_write(sqlite_url: str, tmp_path: Path) -> None:
    await _store_with_a_run(sqlite_url)
    before = (tmp_path / "runs.sqlite").read_bytes()
    reader = RunReader(sqlite_url)
    try:
        public = {name for name, _ in inspect.getmembers(RunReader) if not name.startswith("_")}
        assert public == _READ_METHODS  # no write method exists to be called by mistake
        raw = reader.engine.raw_connection()
        try:
            with pytest.raises(sqlite3.OperationalError, match=r"readonly|read-only"):
                raw.cursor().execute("UPDATE runs SET model = 'x', status = 'failed'")
        finally:
            raw.close()
        with pytest.raises(sa.exc.OperationalError), reader.engine.begin() as conn:
            conn.execute(sa.text("DELETE FROM predictions"))
        assert reader.run("run-1").provenance == provenance()  # the predecessor rewrote this
        assert len(reader.predictions("run-1")) == 1
    finally:
        reader.close()
    assert (tmp_path / "runs.sqlite").read_bytes() == before


async def test_reader_on_postgresql_cannot_write(pg_url: str) -> None:
    await _store_with_a_run(pg_url)
    with RunReader(pg_url) as reader:
        with (
            pytest.raises(sa.exc.InternalError, match="read-only transaction"),
            reader.engine.begin() as conn,
        ):
            conn.execute(sa.text("UPDATE runs SET status = 'failed'"))
        assert reader.run("run-1").status.value == "finished"


async def test_records_read_back_exactly_as_written(store_url: str) -> None:
    await _store_with_a_run(store_url)
    with RunReader(store_url) as reader:
        assert reader.predictions("run-1") == [prediction("q0")]
        assert reader.trace("run-1", "q0") == [
            step("q0", 0, subtitles_shown=("[2.0s] «Ünïcode» line",)),
            step("q0", 1, tool_name="get_frames", tool_arguments='{"start_s": 1, "end_s": 2}'),
        ]
        assert [s.step_idx for s in reader.iter_traces("run-1")] == [0, 1]
        assert [r.run_id for r in reader.runs()] == ["run-1"]


async def test_reader_reads_while_a_writer_is_open(sqlite_url: str) -> None:
    async with await RunLog.open(sqlite_url, provenance()) as log:
        await log.write_step(step("q0", 0))
        await log.flush()  # a step is queued, then committed with the next batch
        with RunReader(sqlite_url) as reader:
            assert len(reader.trace("run-1", "q0")) == 1
            assert reader.run("run-1").status.value == "running"


def test_reader_of_a_missing_store_creates_nothing(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no run store"):
        RunReader(f"sqlite:///{tmp_path / 'absent.sqlite'}")
    assert not (tmp_path / "absent.sqlite").exists()


async def test_unknown_run_names_the_known_ones(sqlite_url: str) -> None:
    await _store_with_a_run(sqlite_url)
    with RunReader(sqlite_url) as reader, pytest.raises(StoreError, match=r"its runs: run-1 \(`skillharness"):
        reader.run("nope")


async def test_unknown_run_names_the_latest_runs_a_user_started_not_every_child(sqlite_url: str) -> None:
    """A training run has a hundred child runs; the message names the runs a user started, latest first."""
    for i in range(12):
        async with await RunLog.open(sqlite_url, provenance(f"top-{i:02d}")):
            pass
        async with await RunLog.open(
            sqlite_url, provenance(f"top-{i:02d}.child", parent_run_id=f"top-{i:02d}")
        ):
            pass
    with RunReader(sqlite_url) as reader, pytest.raises(StoreError) as info:
        reader.run("nope")
    message = str(info.value)
    assert "its runs: top-11, top-10," in message
    assert "the latest 10 of 12, besides 12 child runs of theirs" in message
    assert "top-01" not in message
    assert ".child" not in message


async def test_answer_steps_are_the_plain_replies_and_the_named_tool_calls(store_url: str) -> None:
    kinds = [
        {"role": StepRole.USER},
        {"role": StepRole.ASSISTANT},  # a plain reply: a possible answer
        {"role": StepRole.ASSISTANT, "tool_name": "get_frames", "tool_arguments": "{}"},
        {"role": StepRole.TOOL, "tool_name": "get_frames", "tool_arguments": "{}"},
        {"role": StepRole.ASSISTANT, "tool_name": "submit_answer", "tool_arguments": '{"answer": "B"}'},
        {"role": StepRole.TOOL, "tool_name": "submit_answer", "tool_arguments": '{"answer": "B"}'},
    ]
    async with await RunLog.open(store_url, provenance()) as log:
        for i, kind in enumerate(kinds):
            await log.write_step(step("q0", i, **kind))
        await log.write_prediction(prediction("q0", n_steps=len(kinds)))
    with RunReader(store_url) as reader:
        every = list(reader.iter_traces("run-1"))
        answers = list(reader.iter_traces("run-1", answers_via="submit_answer"))
    assert [s.step_idx for s in every] == [0, 1, 2, 3, 4, 5]
    assert [s.step_idx for s in answers] == [1, 5]
    assert raw_answers(answers) == raw_answers(every) == {("q0", 0): "B"}


async def test_a_run_recorded_with_sampling_a_later_version_refuses_is_read_as_written(
    sqlite_url: str, tmp_path: Path
) -> None:
    """Sampling ranges are checked when a config loads; a run recorded before they were (every
    request refused, temperature -1) is read as written and keeps the store's other runs readable."""
    await _store_with_a_run(sqlite_url)
    async with await RunLog.open(sqlite_url, provenance("run-2")) as log:
        await log.write_prediction(prediction("q0", run_id="run-2"))
    with sqlite3.connect(tmp_path / "runs.sqlite") as conn:  # as an earlier version recorded it
        conn.execute("DROP TRIGGER runs_provenance_immutable")
        conn.execute(
            """UPDATE runs SET sampling = '{"temperature": -1, "stop": ["x"]}' WHERE run_id = 'run-2'"""
        )
    with RunReader(sqlite_url) as reader:
        assert [info.run_id for info in reader.runs()] == ["run-1", "run-2"]
        sampling = reader.run("run-2").provenance.sampling
    assert sampling.temperature == -1
    assert sampling.stop == ("x",)
