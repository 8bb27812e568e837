"""A SQLite store appears whole or not at all; an empty file is "not initialised", and said so."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from pathlib import Path

import pytest
from store_support import prediction, provenance

from skillharness.errors import StoreError, StoreNotInitialised
from skillharness.store import RunLog, RunReader, RunStore
from skillharness.store import initialise as initialise_module


def test_a_zero_byte_store_is_reported_as_not_initialised(tmp_path: Path) -> None:
    store = tmp_path / "runs.sqlite"
    store.write_bytes(b"")
    with pytest.raises(StoreNotInitialised) as info:  # a caller may replace it: it holds nothing
        RunReader(f"sqlite:///{store}")
    assert "is empty (not initialised)" in str(info.value)
    assert "without --resume" in str(info.value)
    assert "schema version 0" not in str(info.value)


async def test_a_zero_byte_store_is_initialised_by_the_next_run(tmp_path: Path) -> None:
    store = tmp_path / "runs.sqlite"
    store.write_bytes(b"")
    log = await RunLog.open(f"sqlite:///{store}", provenance())
    await log.write_prediction(prediction("q1"))
    await log.close()
    with RunReader(f"sqlite:///{store}") as reader:
        assert [p.question_id for p in reader.predictions("run-1")] == ["q1"]


def test_a_store_whose_creation_is_stopped_midway_is_not_left_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = tmp_path / "runs.sqlite"

    def killed(*_: object, **__: object) -> int:
        raise KeyboardInterrupt  # as if the process were stopped while creating the tables

    monkeypatch.setattr(initialise_module, "migrate", killed)
    with pytest.raises(KeyboardInterrupt):
        asyncio.run(RunLog.open(f"sqlite:///{store}", provenance()))
    assert not store.exists()
    assert list(tmp_path.iterdir()) == [], "no temporary file is left either"


def test_store_errors_carry_no_sqlalchemy_background_link(tmp_path: Path) -> None:
    store = tmp_path / "runs.sqlite"
    store.write_bytes(b"this is not a database, just text of some length" * 40)
    with pytest.raises(StoreError) as info:
        RunReader(f"sqlite:///{store}")
    assert "not a database" in str(info.value)
    assert "Background on this error" not in str(info.value)
    assert "sqlalche.me" not in str(info.value)
    assert "[SQL:" not in str(info.value), "our query tells the user nothing about their file"
    assert "SELECT" not in str(info.value)


def test_another_programs_sqlite_file_is_neither_read_nor_written_as_a_store(tmp_path: Path) -> None:
    """A file at the store's path holding another program's tables: our tables are never written into
    it, not even the journal-mode byte of its header changes, and the message says what to do."""
    other = tmp_path / "app.sqlite"
    with contextlib.closing(sqlite3.connect(other)) as conn:
        conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
        conn.execute("INSERT INTO invoices (total) VALUES (12.5)")
        conn.commit()
    before = other.read_bytes()
    with pytest.raises(StoreError, match=r"another program's tables \(invoices\).*store\.url"):
        RunStore.open(f"sqlite:///{other}")
    with pytest.raises(StoreError, match=r"another program's tables \(invoices\)"):
        RunReader(f"sqlite:///{other}")
    assert other.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["app.sqlite"]


async def test_a_sqlite_file_with_no_tables_at_all_becomes_a_store(tmp_path: Path) -> None:
    blank = tmp_path / "blank.sqlite"
    with contextlib.closing(sqlite3.connect(blank)) as conn:
        conn.execute("PRAGMA user_version = 1")  # a valid header, no table: nothing to lose
        conn.commit()
    log = await RunLog.open(f"sqlite:///{blank}", provenance())
    await log.write_prediction(prediction("q1"))
    await log.close()
    with RunReader(f"sqlite:///{blank}") as reader:
        assert [p.question_id for p in reader.predictions("run-1")] == ["q1"]
