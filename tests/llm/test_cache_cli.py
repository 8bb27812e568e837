"""``skillharness cache stats|prune|clear`` on both backends, in a subprocess like a user runs it."""

from __future__ import annotations

import subprocess
import sys
import time

from skillharness.llm.cache.backend import open_backend


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "skillharness.cli", "cache", *args], capture_output=True, text=True, timeout=60
    )


async def test_stats_prune_clear(cache_url: str) -> None:
    backend = open_backend(cache_url, "clitest")
    other = open_backend(cache_url, "clitest-other")
    await backend.clear()
    await backend.put("a", b"12345", None)
    await backend.put("b", b"678", 0.05)
    await other.put("c", b"keep", None)
    time.sleep(0.1)
    stats = run_cli("stats", "--url", cache_url, "--namespace", "clitest")
    assert stats.returncode == 0, stats.stderr
    assert "namespace: clitest" in stats.stdout
    assert "entries:   1" in stats.stdout or "entries:   2" in stats.stdout  # redis expired it already
    prune = run_cli("prune", "--url", cache_url, "--namespace", "clitest")
    assert prune.returncode == 0 and "pruned" in prune.stdout
    clear = run_cli("clear", "--url", cache_url, "--namespace", "clitest", "--yes")
    assert clear.returncode == 0 and "cleared 1 entries" in clear.stdout
    assert await backend.get("a") is None
    assert await other.get("c") == b"keep"  # another namespace is untouched
    await other.clear()
    await backend.aclose()
    await other.aclose()


def test_bad_url_is_a_user_error_exit_2() -> None:
    result = run_cli("stats", "--url", "ftp://nowhere")
    assert result.returncode == 2
    assert "cache.url" in result.stderr
