"""SQLite file backend: the embedded default, safe for several processes (WAL)."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import threading
import time
from pathlib import Path

from skillharness.errors import CacheError
from skillharness.llm.cache.backend import BackendStats

__all__ = ["SQLiteBackend"]

_DDL = """
CREATE TABLE IF NOT EXISTS cache_entries (
    namespace  TEXT NOT NULL,
    key        TEXT NOT NULL,
    value      BLOB NOT NULL,
    created_at REAL NOT NULL,
    expires_at REAL,              -- NULL: never expires
    PRIMARY KEY (namespace, key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS cache_entries_expiry ON cache_entries (namespace, expires_at);
"""
_COLUMNS = frozenset({"namespace", "key", "value", "created_at", "expires_at"})


def _why_unwritable(path: Path) -> str:
    """SQLite says only "unable to open database file"; name the permission it lacked, if any.

    Even a read of a WAL database writes its -wal and -shm companions beside it, so a folder the
    user cannot write fails a lookup as well as a store."""
    folder = path.parent
    if path.is_dir():
        return " (it is a folder; name a file inside it)"
    if path.exists() and not os.access(path, os.W_OK):
        return " (the file is read-only; the cache writes to it)"
    if folder.is_dir() and not os.access(folder, os.W_OK):
        return f" (the folder {folder} is not writable; SQLite writes -wal and -shm files beside the cache)"
    return ""


def _refuse_foreign(conn: sqlite3.Connection, path: Path) -> None:
    """CacheError when ``path`` is a SQLite database with tables but no ``cache_entries``: a run
    store or any other database named by mistake, which the cache must not add its table to.
    A new or empty file has no table and becomes a cache."""
    rows = conn.execute(
        "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'"
        " ORDER BY name"
    ).fetchall()
    tables = [str(row[0]) for row in rows]
    if tables and "cache_entries" not in tables:
        raise CacheError(
            f"{path} is a SQLite database but not a response cache (it holds tables: {', '.join(tables)}); "
            "name another file for the cache",
            file=str(path),
            tables=tables,
        )
    if tables:
        # A table of that name laid out otherwise (another tool's) would fail every query with
        # "no such column"; say which file holds what, before WAL mode rewrites its header.
        columns = [str(row[1]) for row in conn.execute("PRAGMA table_info(cache_entries)")]
        if not _COLUMNS.issubset(columns):
            raise CacheError(
                f"{path}: its table cache_entries is not a response cache's (columns {', '.join(columns)}); "
                "name another file for the cache",
                file=str(path),
                columns=columns,
            )


class SQLiteBackend:
    """Writes go through one connection guarded by a lock, in a worker thread, so waiting for
    another process's write lock never blocks the event loop. Lookups use a second connection
    on the event-loop thread: under WAL a reader never waits for writers, and a lookup costs
    tens of microseconds, less than a thread hop."""

    def __init__(self, path: str | Path, namespace: str) -> None:
        self.path = Path(path)
        self.namespace = namespace
        self._lock = threading.Lock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(
                self.path, timeout=30.0, check_same_thread=False, isolation_level=None
            )
            try:
                _refuse_foreign(self._conn, self.path)
            except CacheError:
                self._conn.close()
                raise
            # WAL lets readers and one writer (possibly other processes) proceed together;
            # synchronous=NORMAL is durable across process crashes, which is what a cache needs.
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.executescript(_DDL)
            self._reader = sqlite3.connect(
                self.path, timeout=30.0, check_same_thread=False, isolation_level=None
            )
        except sqlite3.Error as exc:
            raise CacheError(
                f"cannot open cache file {self.path}: {exc}{_why_unwritable(self.path)}", file=str(self.path)
            ) from exc

    def _run(self, sql: str, params: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
        with self._lock:
            try:
                return self._conn.execute(sql, params).fetchall()
            except sqlite3.Error as exc:
                raise CacheError(f"cache file {self.path}: {exc}", file=str(self.path)) from exc

    async def _arun(self, sql: str, params: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
        return await asyncio.to_thread(self._run, sql, params)

    async def get(self, key: str) -> bytes | None:
        try:
            row = self._reader.execute(
                "SELECT value FROM cache_entries"
                " WHERE namespace=? AND key=? AND (expires_at IS NULL OR expires_at>?)",
                (self.namespace, key, time.time()),
            ).fetchone()
        except sqlite3.Error as exc:
            raise CacheError(f"cache file {self.path}: {exc}", file=str(self.path)) from exc
        return bytes(row[0]) if row else None

    async def put(self, key: str, value: bytes, ttl_s: float | None) -> None:
        now = time.time()
        await self._arun(
            "INSERT OR REPLACE INTO cache_entries VALUES (?,?,?,?,?)",
            (self.namespace, key, value, now, None if ttl_s is None else now + ttl_s),
        )

    async def delete(self, key: str) -> None:
        await self._arun("DELETE FROM cache_entries WHERE namespace=? AND key=?", (self.namespace, key))

    async def stats(self) -> BackendStats:
        rows = await self._arun(
            "SELECT COUNT(*), COALESCE(SUM(LENGTH(value)),0),"
            " COALESCE(SUM(expires_at IS NOT NULL AND expires_at<=?),0)"
            " FROM cache_entries WHERE namespace=?",
            (time.time(), self.namespace),
        )
        entries, size, expired = (int(v) for v in rows[0])  # type: ignore[call-overload]
        return BackendStats("sqlite", str(self.path), entries, size, expired)

    async def prune(self) -> int:
        rows = await self._arun(
            "DELETE FROM cache_entries WHERE namespace=? AND expires_at IS NOT NULL AND expires_at<=?"
            " RETURNING 1",
            (self.namespace, time.time()),
        )
        return len(rows)

    async def clear(self) -> int:
        rows = await self._arun("DELETE FROM cache_entries WHERE namespace=? RETURNING 1", (self.namespace,))
        return len(rows)

    async def aclose(self) -> None:
        with self._lock:
            self._conn.close()
        self._reader.close()
