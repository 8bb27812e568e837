"""Real services for the tests (PostgreSQL, redis-server), shared by every test folder.

The fixtures built on these live in the root conftest, so any folder's tests can ask for a
PostgreSQL store or a Redis cache; each skips, and says why, when its server is not installed.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from net_support import free_port

REDIS_SERVER = "/usr/bin/redis-server"


def start_redis() -> tuple[subprocess.Popen[bytes], str]:
    """A real redis-server on a free loopback port, without persistence (skips if absent)."""
    if not Path(REDIS_SERVER).exists() and shutil.which("redis-server") is None:
        pytest.skip(f"redis-server not installed ({REDIS_SERVER} absent): Redis cache tests skipped")
    binary = REDIS_SERVER if Path(REDIS_SERVER).exists() else str(shutil.which("redis-server"))
    port = free_port()
    proc = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 10
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2) as sock:
                sock.sendall(b"PING\r\n")
                if sock.recv(16).startswith(b"+PONG"):
                    break
        except OSError:
            pass
        if time.monotonic() > deadline:
            proc.kill()
            pytest.fail("redis-server did not start")
        time.sleep(0.05)
    return proc, f"redis://127.0.0.1:{port}/0"


def _postgres_bin() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/postgres"))
    return Path(found[-1]).parent if found else None


def pg_server_urls() -> Iterator[str]:
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


def new_database(server_url: str) -> str:
    """A fresh, empty database on a test server; its URL."""
    name = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(f"{server_url}/postgres", autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return f"{server_url}/{name}"
