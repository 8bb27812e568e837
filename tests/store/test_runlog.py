"""RunLog: provenance written once, upserts keyed by the primary keys, batching, resume."""

from __future__ import annotations

import asyncio
import threading

import pytest
import sqlalchemy as sa
from store_support import prediction, provenance, step

from skillharness.errors import StoreError
from skillharness.store import PredictionStatus, RunLog, RunReader, RunStatus
from skillharness.store.run_tables import RunTables


async def _count(url: str, table: str) -> int:
    with RunReader(url) as reader, reader.engine.connect() as conn:
        return conn.execute(sa.text(f"SELECT count(*) FROM {table}")).scalar_one()


async def test_p2_3_upserts_write_no_duplicate_rows(store_url: str) -> None:
    questions = [f"q{i}" for i in range(5)]
    for attempt in range(2):  # the second attempt is a resume rewriting the very same keys
        async with await RunLog.open(store_url, provenance(), resume=attempt > 0) as log:
            for q in questions:
                await log.write_step(step(q, 0))
                await log.write_step(step(q, 1, content=f"attempt {attempt}"))
                await log.write_prediction(prediction(q, latency_s=1.0 + attempt))
            await log.write_prediction(prediction("q0", latency_s=9.0))  # same key twice in one run
    assert await _count(store_url, "predictions") == len(questions)
    assert await _count(store_url, "traces") == 2 * len(questions)
    with RunReader(store_url) as reader:
        rows = {p.question_id: p for p in reader.predictions("run-1")}
        assert rows["q0"].latency_s == 9.0  # the last write won
        assert rows["q1"].latency_s == 2.0
        assert [s.content for s in reader.trace("run-1", "q3")] == ["step 0", "attempt 1"]


async def test_resume_drops_trace_steps_left_by_a_cut_attempt(store_url: str) -> None:
    async with await RunLog.open(store_url, provenance()) as log:
        for index in range(5):  # a first attempt that "crashed" before its prediction
            await log.write_step(step("q0", index))
    async with await RunLog.open(store_url, provenance(), resume=True) as log:
        await log.write_step(step("q0", 0))
        await log.write_step(step("q0", 1))
        await log.write_prediction(prediction("q0", n_steps=2))
    with RunReader(store_url) as reader:
        assert [s.step_idx for s in reader.trace("run-1", "q0")] == [0, 1]


async def test_concurrent_writes_are_batched_and_all_committed(store_url: str) -> None:
    async with await RunLog.open(store_url, provenance()) as log:
        await asyncio.gather(*(log.write_step(step(f"q{i}", 0)) for i in range(300)))
        await log.flush()
        assert 2 <= log.batches_written < 300  # at most batch_size (256) records per transaction
    assert await _count(store_url, "traces") == 300


async def test_existing_run_is_not_reopened_without_resume(store_url: str) -> None:
    await (await RunLog.open(store_url, provenance())).close()
    with pytest.raises(StoreError, match="already exists"):
        await RunLog.open(store_url, provenance())


async def test_resume_with_other_provenance_is_refused_and_changes_nothing(store_url: str) -> None:
    await (await RunLog.open(store_url, provenance())).close()
    with pytest.raises(StoreError, match=r"provenance differs \(bundle_hash") as info:
        await RunLog.open(store_url, provenance(bundle_hash="x" * 64), resume=True)
    assert info.value.context["fields"] == ["bundle_hash"]
    with RunReader(store_url) as reader:
        assert reader.run("run-1").provenance == provenance()


async def test_resume_keeps_the_provenance_row_as_first_written(store_url: str) -> None:
    first = await (await RunLog.open(store_url, provenance())).close()
    await asyncio.sleep(0.01)
    log = await RunLog.open(store_url, provenance(), resume=True)
    with RunReader(store_url) as reader:
        during = reader.run("run-1")
    again = await log.close(RunStatus.INTERRUPTED)
    assert during.status is RunStatus.RUNNING
    assert during.ended_at is None
    assert again.started_at == first.started_at
    assert again.provenance == first.provenance
    assert again.status is RunStatus.INTERRUPTED


async def test_the_database_refuses_to_change_provenance(store_url: str) -> None:
    log = await RunLog.open(store_url, provenance())
    await log.close()
    engine = sa.create_engine(store_url.replace("postgresql://", "postgresql+psycopg://"))
    try:
        with pytest.raises(sa.exc.DBAPIError, match="immutable"), engine.begin() as conn:
            conn.execute(sa.text("UPDATE runs SET model = 'other' WHERE run_id = 'run-1'"))
        with engine.begin() as conn:  # the mutable columns still may change
            conn.execute(sa.text("UPDATE runs SET status = 'failed' WHERE run_id = 'run-1'"))
    finally:
        engine.dispose()


async def test_close_records_status_end_and_counts(store_url: str) -> None:
    async with await RunLog.open(store_url, provenance()) as log:
        await log.write_prediction(prediction("a"))
        await log.write_prediction(
            prediction("b", answer=None, correct=False, status=PredictionStatus.PARSE_ERROR)
        )
        await log.write_prediction(
            prediction("c", answer=None, correct=None, status=PredictionStatus.INFRA_ERROR)
        )
        assert await log.completed_keys() == {("a", 0), ("b", 0)}
    with RunReader(store_url) as reader:
        info = reader.run("run-1")
        assert reader.status_counts("run-1")[PredictionStatus.INFRA_ERROR] == 1
    assert (info.status, info.n_ok, info.n_parse_error, info.n_infra_error) == (RunStatus.FINISHED, 1, 1, 1)
    assert info.ended_at is not None
    assert info.ended_at >= info.started_at


async def test_a_failing_body_marks_the_run_failed(sqlite_url: str) -> None:
    with pytest.raises(RuntimeError):
        async with await RunLog.open(sqlite_url, provenance()):
            raise RuntimeError("boom")
    with RunReader(sqlite_url) as reader:
        assert reader.run("run-1").status is RunStatus.FAILED


async def test_a_record_of_another_run_is_refused(sqlite_url: str) -> None:
    async with await RunLog.open(sqlite_url, provenance()) as log:
        with pytest.raises(StoreError, match="sent to the log of run"):
            await log.write_step(step("q0", 0, run_id="other"))


def _rename_table(url: str, old: str, new: str) -> None:
    # Another connection to the same file, as a second process would have.
    engine = sa.create_engine(url)
    try:
        with engine.begin() as conn:
            conn.exec_driver_sql(f"ALTER TABLE {old} RENAME TO {new}")
    finally:
        engine.dispose()


def _break_traces(url: str) -> None:
    _rename_table(url, "traces", "traces_gone")  # sabotage: the traces table disappears


def _repair_traces(url: str) -> None:
    _rename_table(url, "traces_gone", "traces")


async def test_a_failed_batch_reaches_its_writers_and_the_log_goes_on(sqlite_url: str) -> None:
    async with await RunLog.open(sqlite_url, provenance()) as log:
        _break_traces(sqlite_url)
        with pytest.raises(StoreError, match="failed"):  # an awaited write of the failing batch
            await asyncio.gather(log.write_step(step("q0", 0)), log.write_prediction(prediction("q0")))
        _repair_traces(sqlite_url)
        await log.write_step(step("q0", 0))
        await log.write_prediction(prediction("q0", n_steps=1))
    assert await _count(sqlite_url, "traces") == 1
    assert await _count(sqlite_url, "predictions") == 1


async def test_a_failed_queued_step_fails_its_question_once_and_no_other(sqlite_url: str) -> None:
    async with await RunLog.open(sqlite_url, provenance()) as log:
        _break_traces(sqlite_url)
        await log.write_step(step("q0", 0))  # queued: returns before the batch fails
        with pytest.raises(StoreError, match="failed"):
            await log.flush()  # the error is reported, and kept for its question
        _repair_traces(sqlite_url)
        await log.write_step(step("q1", 0))  # another question is not affected
        await log.write_prediction(prediction("q1", n_steps=1))
        with pytest.raises(StoreError, match="a trace step of q0#0 was not stored"):  # q0 claims it
            await log.write_prediction(prediction("q0", n_steps=1))
        # Claimed once: the question can now record its failure (as the agent's boundary does).
        await log.write_prediction(
            prediction("q0", answer=None, correct=None, status=PredictionStatus.INFRA_ERROR, n_steps=1)
        )
        await log.flush()
    with RunReader(sqlite_url) as reader:
        stored = {p.question_id: p.status for p in reader.predictions("run-1")}
        assert stored == {"q0": PredictionStatus.INFRA_ERROR, "q1": PredictionStatus.OK}


async def test_a_prediction_queued_behind_a_failed_step_is_not_stored(
    sqlite_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    entered, release = threading.Event(), threading.Event()
    write_batch = RunTables.write_batch

    def held_batch(tables: RunTables, records: list) -> None:  # holds the step's batch in the writer thread
        entered.set()
        assert release.wait(10)
        write_batch(tables, records)

    monkeypatch.setattr(RunTables, "write_batch", held_batch)
    async with await RunLog.open(sqlite_url, provenance()) as log:
        _break_traces(sqlite_url)
        await log.write_step(step("q0", 0))
        assert await asyncio.to_thread(entered.wait, 10)  # the step's batch is being written
        writing = asyncio.ensure_future(log.write_prediction(prediction("q0", n_steps=1)))
        await asyncio.sleep(0.01)
        assert not writing.done()  # queued behind the failing batch
        release.set()
        with pytest.raises(StoreError, match="a trace step of q0#0 was not stored"):
            await writing
        _repair_traces(sqlite_url)
    # A stored prediction implies its steps are stored: here neither is.
    assert await _count(sqlite_url, "predictions") == 0


async def test_a_stored_prediction_implies_its_queued_steps_are_stored(sqlite_url: str) -> None:
    async with await RunLog.open(sqlite_url, provenance()) as log:
        for q in range(30):
            for index in range(3):
                await log.write_step(step(f"q{q}", index))
        await log.write_prediction(prediction("q29", n_steps=3))  # awaited: all 90 steps are in
        with RunReader(sqlite_url) as reader:
            assert sum(len(reader.trace("run-1", f"q{q}")) for q in range(30)) == 90
        assert log.records_written / log.batches_written > 1  # queued steps share batches


async def test_text_with_nul_characters_is_stored(store_url: str) -> None:
    async with await RunLog.open(store_url, provenance()) as log:
        await log.write_step(step("q0", 0, content="bad\x00byte"))
    with RunReader(store_url) as reader:
        assert reader.trace("run-1", "q0")[0].content == "bad\ufffdbyte"


def test_endpoints_are_recorded_without_credentials() -> None:
    recorded = provenance(endpoints=("https://user:secret@api.example.com:8443/v1?api_key=sk-123",))
    recorded = type(recorded).model_validate(recorded.model_dump())
    assert recorded.endpoints == ("https://api.example.com:8443/v1",)


async def test_p0_2_a_lone_queued_step_is_committed_without_a_flush(sqlite_url: str) -> None:
    async with await RunLog.open(sqlite_url, provenance()) as log:
        await log.write_step(step("q0", 0))  # nothing awaited follows it
        for _ in range(200):
            with RunReader(sqlite_url) as reader:
                if reader.trace("run-1", "q0"):
                    break
            await asyncio.sleep(0.01)
        else:
            pytest.fail("a queued step was not committed within 2 s")
        # The writer counts the batch just after its commit, which a reader may see first.
        for _ in range(200):
            if log.batches_written:
                break
            await asyncio.sleep(0.01)
        assert log.batches_written == 1
