"""``skillharness cache stats|prune|clear`` on both backends."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import subprocess
import sys
import time

import pytest
from typer.testing import CliRunner

from cli_support import command_app
from skillharness.commands import cache as cache_cmd
from skillharness.errors import CacheError
from skillharness.llm.cache.opener import open_backend

APP = command_app(cache_cmd.register)


def run_cli(*args: str) -> str:
    result = CliRunner().invoke(APP, ["cache", *args])
    assert result.exit_code == 0, result.output
    return result.output


async def _put(url: str, namespace: str, key: str, value: bytes, ttl: float | None) -> None:
    backend = open_backend(url, namespace)
    await backend.put(key, value, ttl)
    await backend.aclose()


async def _take(url: str, namespace: str, key: str) -> bytes | None:
    """Read ``key`` and then empty ``namespace``."""
    backend = open_backend(url, namespace)
    try:
        return await backend.get(key)
    finally:
        await backend.clear()
        await backend.aclose()


def test_stats_prune_clear(cache_url: str) -> None:
    asyncio.run(_put(cache_url, "clitest", "a", b"12345", None))
    asyncio.run(_put(cache_url, "clitest", "b", b"678", 0.05))
    asyncio.run(_put(cache_url, "clitest-other", "c", b"keep", None))
    time.sleep(0.1)
    stats = run_cli("stats", "--url", cache_url, "--namespace", "clitest")
    assert "namespace: clitest" in stats
    assert "entries:   2" in stats or "entries:   1" in stats  # Redis drops expired entries itself
    assert "pruned" in run_cli("prune", "--url", cache_url, "--namespace", "clitest")
    assert "cleared 1 entries" in run_cli("clear", "--url", cache_url, "--namespace", "clitest", "--yes")
    assert "entries:   0" in run_cli("stats", "--url", cache_url, "--namespace", "clitest")
    assert asyncio.run(_take(cache_url, "clitest-other", "c")) == b"keep"  # another namespace is untouched


def test_clear_asks_for_confirmation(tmp_path) -> None:
    url = f"sqlite:///{tmp_path / 'c.sqlite'}"
    asyncio.run(_put(url, "skillharness", "a", b"1", None))
    result = CliRunner().invoke(APP, ["cache", "clear", "--url", url], input="n\n")
    assert result.exit_code != 0
    assert "entries:   1" in run_cli("stats", "--url", url)


@pytest.mark.slow
def test_bad_url_is_a_user_error_exit_2() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "skillharness.cli", "cache", "stats", "--url", "ftp://nowhere"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert "cache.url" in result.stderr


def test_config_file_names_the_cache_and_a_missing_file_is_not_created(tmp_path) -> None:
    cache_file = tmp_path / "from-config.sqlite"
    config = tmp_path / "experiment.yaml"
    config.write_text(f"cache:\n  url: sqlite:///{cache_file}\n  namespace: fromcfg\n")
    assert "no cache file" in run_cli("stats", "--config", str(config))
    assert not cache_file.exists()
    asyncio.run(_put(f"sqlite:///{cache_file}", "fromcfg", "a", b"1", None))
    out = run_cli("stats", "--config", str(config))
    assert "namespace: fromcfg" in out
    assert "entries:   1" in out


def test_stats_and_clear_refuse_a_database_that_is_not_a_cache(tmp_path) -> None:
    store = tmp_path / "runs.sqlite"
    with contextlib.closing(sqlite3.connect(store)) as conn:
        conn.executescript("CREATE TABLE runs (id TEXT); INSERT INTO runs VALUES ('r1');")
    before = store.read_bytes()
    for args in (["stats"], ["clear", "--yes"]):
        result = CliRunner().invoke(APP, ["cache", *args, "--url", f"sqlite:///{store}"])
        assert isinstance(result.exception, CacheError), result.output
        assert "is a SQLite database but not a response cache (it holds tables: runs)" in str(
            result.exception
        )
    assert store.read_bytes() == before


@pytest.mark.parametrize("namespace", ["a?", "a*", "a[b]", "a\\"])
def test_a_namespace_with_pattern_characters_touches_only_itself(cache_url: str, namespace: str) -> None:
    # SCAN reads its MATCH as a glob: unescaped, "a?" matched (and clear deleted) "ab"'s entries.
    neighbours = ["a", "ab", "abc", "a?x", "a*b"]
    for name in (namespace, *neighbours):
        asyncio.run(_put(cache_url, name, "k", b"v", None))
    try:
        assert "entries:   1" in run_cli("stats", "--url", cache_url, "--namespace", namespace)
        assert "cleared 1 entries" in run_cli("clear", "--url", cache_url, "--namespace", namespace, "--yes")
        for name in neighbours:
            assert "entries:   1" in run_cli("stats", "--url", cache_url, "--namespace", name), name
    finally:
        for name in neighbours:
            run_cli("clear", "--url", cache_url, "--namespace", name, "--yes")


@pytest.mark.parametrize("path", ["abc", "1a", "0/1"])
def test_a_redis_url_whose_database_is_not_a_number_is_refused(redis_url: str, path: str) -> None:
    # redis-py ignores such a path and uses database 0: a typo would clear db 0's namespace.
    url = redis_url.rsplit("/", 1)[0] + "/" + path
    result = CliRunner().invoke(APP, ["cache", "clear", "--url", url, "--yes"])
    assert isinstance(result.exception, CacheError), result.output
    assert f"the database {path!r} in the URL's path is not a number" in str(result.exception)


def test_a_cache_table_of_another_layout_is_named_not_queried(tmp_path) -> None:
    other = tmp_path / "other.sqlite"
    with contextlib.closing(sqlite3.connect(other)) as conn:
        conn.executescript("CREATE TABLE cache_entries (k TEXT, v BLOB);")
    before = other.read_bytes()
    for args in (["stats"], ["prune"], ["clear", "--yes"]):
        result = CliRunner().invoke(APP, ["cache", *args, "--url", f"sqlite:///{other}"])
        assert isinstance(result.exception, CacheError), result.output
        message = str(result.exception)
        assert f"{other}: its table cache_entries is not a response cache's" in message, message
        assert "(columns k, v)" in message
    assert other.read_bytes() == before
