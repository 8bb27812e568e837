"""Store fixtures: each store test runs on a SQLite file, and on PostgreSQL when it is installed."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Each store test runs on SQLite, and on PostgreSQL when it is installed."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'runs.sqlite'}"
    return request.getfixturevalue("pg_url")
