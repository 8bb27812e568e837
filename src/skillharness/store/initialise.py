"""Creating a SQLite run store atomically: a store file either holds the full schema or is absent.

SQLite creates its file at the first connection, before any table exists, so a process killed
during start-up used to leave a 0-byte store that later commands misread as "schema version 0".
Here a new store is built in a temporary file beside the target, with every migration applied,
and then linked into place in one step. An existing 0-byte file holds nothing and is replaced.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from pathlib import Path

from skillharness.store.engine import StoreLocation, create_store_engine
from skillharness.store.migrations import migrate

__all__ = ["ensure_initialised", "is_uninitialised"]


def is_uninitialised(path: Path) -> bool:
    """True for a store file that is absent or empty (a start-up killed before creating it)."""
    return not path.exists() or (path.is_file() and path.stat().st_size == 0)


def ensure_initialised(location: StoreLocation) -> None:
    """Create the SQLite store of ``location`` with the current schema if it is absent or empty."""
    path = location.sqlite_path
    if path is None or not is_uninitialised(path):
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.init-{uuid.uuid4().hex[:8]}")
    try:
        engine = create_store_engine(StoreLocation(location.url.set(database=str(tmp)), tmp), readonly=False)
        try:
            migrate(engine, location.display)
        finally:
            engine.dispose()  # the last connection's close checkpoints the WAL into the file
        if path.exists():  # 0 bytes: nothing to lose
            os.replace(tmp, path)
        else:
            with contextlib.suppress(FileExistsError):  # another process won the race: keep its store
                os.link(tmp, path)
    finally:
        for leftover in (tmp, tmp.with_name(tmp.name + "-wal"), tmp.with_name(tmp.name + "-shm")):
            leftover.unlink(missing_ok=True)
