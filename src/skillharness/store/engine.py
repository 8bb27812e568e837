"""Opening the run store: SQLite (the default, one file) or PostgreSQL (by URL).

Writers and readers get different engines. A writer engine may change the store; a reader
engine cannot, whatever SQL is sent through it: SQLite is opened with ``mode=ro`` (and
``query_only``), PostgreSQL sessions start with ``default_transaction_read_only`` (audit P2-2).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError
from sqlalchemy.pool import QueuePool

from skillharness.errors import StoreError, StoreMissing

__all__ = ["StoreLocation", "create_store_engine", "parse_store_url", "refuse_foreign_sqlite"]


@dataclass(frozen=True)
class StoreLocation:
    """A parsed store URL: which backend, where, and how to name it without its password."""

    url: URL
    sqlite_path: Path | None

    @property
    def display(self) -> str:
        """The URL safe to print or record (password hidden)."""
        return self.url.render_as_string(hide_password=True)

    @property
    def is_sqlite(self) -> bool:
        return self.sqlite_path is not None


def parse_store_url(url: str) -> StoreLocation:
    """``sqlite:///relative.sqlite``, ``sqlite:////abs/path`` or ``postgresql://user@host/db``."""
    try:
        parsed = make_url(url)
    except ArgumentError as exc:
        raise StoreError(f"store.url is not a database URL: {exc}", field="store.url") from exc
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        if not parsed.database or parsed.database == ":memory:":
            raise StoreError("store.url must name a SQLite file (an in-memory store keeps nothing)")
        return StoreLocation(parsed.set(drivername="sqlite+pysqlite"), Path(parsed.database))
    if backend == "postgresql":
        return StoreLocation(parsed.set(drivername="postgresql+psycopg"), None)
    raise StoreError(
        f"store.url backend {backend!r} is not supported; use sqlite:///FILE or postgresql://...",
        field="store.url",
    )


def create_store_engine(location: StoreLocation, *, readonly: bool, busy_timeout_s: float = 30.0) -> Engine:
    """An engine for ``location``; ``readonly`` engines cannot write."""
    if location.sqlite_path is not None:
        return _sqlite_engine(location.sqlite_path, readonly=readonly, busy_timeout_s=busy_timeout_s)
    connect_args = {"options": "-c default_transaction_read_only=on"} if readonly else {}
    return create_engine(location.url, connect_args=connect_args, pool_pre_ping=True)


def refuse_foreign_sqlite(tables: Iterable[str]) -> None:
    """StoreError for a SQLite file holding tables and no ``schema_version``: another program's file.
    A new SQLite store is built whole beside its path and linked in (store/initialise.py), so a file
    of ours always has it; writing our tables into another program's file would be its owner's loss.
    (A PostgreSQL database is commonly shared with other schemas' tables, and is not refused.)"""
    found = sorted(name for name in tables if not name.startswith("sqlite_"))
    if found and "schema_version" not in found:
        shown = ", ".join(found[:5]) + (", …" if len(found) > 5 else "")
        raise StoreError(
            f"this SQLite file holds another program's tables ({shown}) and no schema_version: it was not "
            "written by skillharness and will not be modified; name another file for the run store "
            "(store.url, --store)",
            tables=found,
        )


def _sqlite_tables(path: Path) -> list[str]:
    """The tables of an existing SQLite file, read without changing a byte (the writer's WAL pragma
    would rewrite the header of any file it opens)."""
    conn = sqlite3.connect(f"file:{quote(str(path.resolve()))}?mode=ro", uri=True)
    try:
        return [row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    except sqlite3.DatabaseError:
        return []  # not a database: the engine's own error says so
    finally:
        conn.close()


def _sqlite_engine(path: Path, *, readonly: bool, busy_timeout_s: float) -> Engine:
    if readonly and not path.is_file():
        raise StoreMissing(f"no run store at {path}", path=str(path))
    if not readonly:
        if path.is_file() and path.stat().st_size > 0:
            refuse_foreign_sqlite(_sqlite_tables(path))
        path.parent.mkdir(parents=True, exist_ok=True)
    target = f"file:{quote(str(path.resolve()))}?mode=ro" if readonly else str(path)

    def connect() -> sqlite3.Connection:
        # isolation_level=None: the driver never opens transactions behind our back; the
        # "begin" hook below opens them explicitly. check_same_thread=False: the writer runs
        # its batches on worker threads, one at a time.
        return sqlite3.connect(
            target, uri=readonly, timeout=busy_timeout_s, isolation_level=None, check_same_thread=False
        )

    engine = create_engine("sqlite+pysqlite://", creator=connect, poolclass=QueuePool, pool_size=2)
    busy_ms = int(busy_timeout_s * 1000)

    @event.listens_for(engine, "connect")
    def _pragmas(dbapi_connection: sqlite3.Connection, _record: object) -> None:
        cursor = dbapi_connection.cursor()
        # Wait up to busy_timeout for another process's lock instead of failing at once
        # with "database is locked" (a reader and a writer, or two runs, share the file).
        cursor.execute(f"PRAGMA busy_timeout = {busy_ms}")
        # SQLite ignores foreign keys unless asked, per connection: without this a trace could
        # name a run that does not exist.
        cursor.execute("PRAGMA foreign_keys = ON")
        if readonly:
            # Belt and braces with mode=ro: any write statement fails on this connection.
            cursor.execute("PRAGMA query_only = ON")
        else:
            # WAL: readers (reports, `runs show`) never block the writer and never see a
            # half-written batch; the setting is stored in the file.
            cursor.execute("PRAGMA journal_mode = WAL")
            # In WAL mode NORMAL still survives a process crash (kill -9) with every committed
            # batch; only an OS crash or power loss may drop the last commits. FULL would fsync
            # every batch for no gain against the failures a run actually sees.
            cursor.execute("PRAGMA synchronous = NORMAL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(conn: object) -> None:
        # Writers take the write lock up front (IMMEDIATE), so two processes cannot both read
        # and then deadlock upgrading to write; busy_timeout makes the second one wait.
        conn.exec_driver_sql("BEGIN" if readonly else "BEGIN IMMEDIATE")  # type: ignore[attr-defined]

    return engine
