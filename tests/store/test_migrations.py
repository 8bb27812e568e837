"""Schema versions: a new store is built by the upgrade steps, an old one is upgraded in place,
a newer or foreign one is refused."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
import sqlalchemy as sa
from store_support import prediction, provenance

from skillharness.errors import StoreError
from skillharness.store import PredictionStatus, RunLog, RunMetric, RunReader, RunStore
from skillharness.store.engine import create_store_engine, parse_store_url
from skillharness.store.migrations import migrate
from skillharness.store.schema import CURRENT_VERSION, metadata

LEGACY_V1 = Path(__file__).parent / "legacy" / "store_v1.sql"


def _engine(url: str) -> sa.Engine:
    return create_store_engine(parse_store_url(url), readonly=False)


def _layout(engine: sa.Engine) -> dict[str, object]:
    inspector = sa.inspect(engine)
    return {
        name: (
            sorted((c["name"], bool(c["nullable"])) for c in inspector.get_columns(name)),
            sorted(inspector.get_pk_constraint(name)["constrained_columns"]),
            sorted(tuple(i["column_names"]) for i in inspector.get_indexes(name)),
        )
        for name in sorted(inspector.get_table_names())
    }


def _version(engine: sa.Engine) -> int:
    with engine.connect() as conn:
        return conn.execute(sa.text("SELECT version FROM schema_version")).scalar_one()


def test_upgrade_steps_build_exactly_the_declared_tables(store_url: str) -> None:
    engine = _engine(store_url)
    try:
        assert migrate(engine, store_url) == 0
        stored = _layout(engine)
        assert _version(engine) == CURRENT_VERSION
    finally:
        engine.dispose()
    declared = sa.create_engine("sqlite://")
    metadata.create_all(declared)
    assert stored.keys() == _layout(declared).keys()
    for name, (columns, pk, indexes) in _layout(declared).items():
        assert stored[name][0] == columns, name
        assert stored[name][1] == pk, name
        assert stored[name][2] == indexes, name


async def test_a_version_1_sqlite_store_opens_and_is_upgraded(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as conn:
        conn.executescript(LEGACY_V1.read_text())
    url = f"sqlite:///{path}"
    with pytest.raises(StoreError, match="schema version 1"):  # a reader never upgrades
        RunReader(url)
    async with await RunLog.open(url, provenance("new-run")) as log:
        await log.write_prediction(prediction("q-9", run_id="new-run", degraded=True))
    with RunReader(url) as reader:
        old = {p.question_id: p for p in reader.predictions("legacy-run")}
        assert old["q-001"].answer == "C"
        assert old["q-001"].degraded is False
        assert old["q-002"].status is PredictionStatus.PARSE_ERROR
        assert reader.trace("legacy-run", "q-001")[0].frames_shown == (1.5, 4.5)
        assert reader.predictions("new-run")[0].degraded is True
        assert reader.run("legacy-run").provenance.model == "sim-vl"
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT version FROM schema_version").fetchone() == (CURRENT_VERSION,)


async def test_a_version_1_store_is_upgraded_on_both_backends(store_url: str) -> None:
    engine = _engine(store_url)
    try:
        migrate(engine, store_url, target=1)
        assert _version(engine) == 1
    finally:
        engine.dispose()
    async with await RunLog.open(store_url, provenance()) as log:
        await log.write_prediction(prediction("q0", n_steps=3, degraded=True))
    with RunReader(store_url) as reader:
        assert reader.predictions("run-1")[0].n_steps == 3


@pytest.mark.parametrize("opener", ["writer", "reader"])
async def test_a_newer_store_is_refused(store_url: str, opener: str) -> None:
    await (await RunLog.open(store_url, provenance())).close()
    engine = _engine(store_url)
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE schema_version SET version = :v"), {"v": CURRENT_VERSION + 1})
    engine.dispose()
    if opener == "writer":
        with pytest.raises(StoreError, match="newer than this skillharness"):
            await RunLog.open(store_url, provenance(), resume=True)
    else:
        with pytest.raises(StoreError, match="newer than this skillharness"):
            RunReader(store_url)


async def test_a_foreign_database_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "foreign.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE runs (id INTEGER)")
    with pytest.raises(StoreError, match="not written by skillharness"):
        await RunLog.open(f"sqlite:///{path}", provenance())
    with sqlite3.connect(path) as conn:
        assert [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")] == ["runs"]


@pytest.mark.parametrize("url", ["mysql://localhost/db", "sqlite://", "not a url"])
def test_unsupported_store_urls_are_refused(url: str) -> None:
    with pytest.raises(StoreError):
        parse_store_url(url)


def test_a_password_in_the_url_is_never_shown() -> None:
    assert "secret" not in parse_store_url("postgresql://u:secret@db.example/runs").display


LEGACY_V2 = Path(__file__).parent / "legacy" / "store_v2.sql"


async def test_a_version_2_store_written_by_the_previous_release_is_upgraded_to_3(tmp_path: Path) -> None:
    path = tmp_path / "v2.sqlite"
    with sqlite3.connect(path) as conn:
        conn.executescript(LEGACY_V2.read_text())
        assert conn.execute("SELECT version FROM schema_version").fetchone() == (2,)
    url = f"sqlite:///{path}"
    with pytest.raises(StoreError, match="schema version 2"):
        RunReader(url)
    store = RunStore.open(url)
    try:
        store.upsert([RunMetric(run_id="legacy-v2", name="probe", value={"ok": 1})])
        child = provenance("child", parent_run_id="legacy-v2")
        await (await store.open_run(child)).close()
    finally:
        store.close()
    with RunReader(url) as reader:
        old = {p.question_id: p for p in reader.predictions("legacy-v2")}
        assert old["q-001"].degraded is True
        assert old["q-001"].n_steps == 1
        assert reader.run("legacy-v2").provenance.parent_run_id is None
        assert [r.run_id for r in reader.children("legacy-v2")] == ["child"]
        assert reader.ledger(RunMetric, run_id="legacy-v2")[0].value == {"ok": 1}
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT version FROM schema_version").fetchone() == (CURRENT_VERSION,)
        # The provenance trigger now guards parent_run_id too.
        with pytest.raises(sqlite3.DatabaseError, match="immutable"):
            conn.execute("UPDATE runs SET parent_run_id = 'other' WHERE run_id = 'child'")
