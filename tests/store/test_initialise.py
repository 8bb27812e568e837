"""A SQLite store appears whole or not at all; an empty file is "not initialised", and said so."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from store_support import prediction, provenance

from skillharness.errors import StoreError, StoreNotInitialised
from skillharness.store import RunLog, RunReader
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
