"""Store fixtures: a SQLite file per test, and a real PostgreSQL server when one is installed."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from net_support import free_port


def _postgres_bin() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/postgres"))
    return Path(found[-1]).parent if found else None


@pytest.fixture(scope="session")
def pg_server() -> Iterator[str]:
    """A throwaway PostgreSQL cluster on a free port; yields its admin URL (no database)."""
    bindir = _postgres_bin()
    if bindir is None:
        pytest.skip("PostgreSQL not installed (/usr/lib/postgresql/*/bin/postgres); .ci/run installs it")
    # PostgreSQL refuses to run as root: run it as the 'postgres' system user then.
    user = "postgres" if os.geteuid() == 0 else None
    root = Path(tempfile.mkdtemp(prefix="skillharness-pg-"))
    if user:
        shutil.chown(root, user, user)
    data, port = root / "data", free_port()
    run = {"user": user, "group": user} if user else {}
    subprocess.run(
        [bindir / "initdb", "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8"],
        check=True, capture_output=True, **run,
    )  # fmt: skip
    server = subprocess.Popen(
        [bindir / "postgres", "-D", data, "-p", str(port), "-h", "127.0.0.1", "-k", root, "-F"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **run,
    )  # fmt: skip
    url = f"postgresql://postgres@127.0.0.1:{port}"
    try:
        for _ in range(200):
            try:
                psycopg.connect(f"{url}/postgres", connect_timeout=1).close()
                break
            except psycopg.OperationalError:
                time.sleep(0.05)
        else:
            pytest.fail("the PostgreSQL test server did not start")
        yield url
    finally:
        server.terminate()
        server.wait(timeout=30)
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def pg_url(pg_server: str) -> str:
    """A fresh, empty database on the test server."""
    name = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(f"{pg_server}/postgres", autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return f"{pg_server}/{name}"


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'runs.sqlite'}"


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Each store test runs on SQLite, and on PostgreSQL when it is installed."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'runs.sqlite'}"
    return request.getfixturevalue("pg_url")
