"""``INSERT ... ON CONFLICT (primary key) DO UPDATE``: the one write statement of the store."""

from __future__ import annotations

from sqlalchemy import Executable, Table
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

__all__ = ["upsert_statement"]


def upsert_statement(dialect: str, table: Table, columns: tuple[str, ...]) -> Executable:
    """The upsert of ``columns`` into ``table`` (rows carry all of them), for ``dialect``."""
    insert = pg_insert if dialect == "postgresql" else sqlite_insert
    stmt = insert(table)
    keys = [column.name for column in table.primary_key.columns]
    changes = {name: stmt.excluded[name] for name in columns if name not in keys}
    if not changes:  # every column is a key: a repeat is a no-op
        return stmt.on_conflict_do_nothing(index_elements=keys)
    return stmt.on_conflict_do_update(index_elements=keys, set_=changes)
