"""The README's demo command, run as a user runs it."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from cli_support import run_cli


def demo(out: Path, cache: Path) -> subprocess.CompletedProcess[str]:
    args = ("demo", "--out", str(out), "--videos", "12", "--bench-cache", str(cache))
    return run_cli(*args, env={"COLUMNS": "160", "PATH": "/usr/bin:/bin"})


@pytest.mark.slow
def test_demo_runs_the_pipeline_and_reruns_identically(tmp_path: Path) -> None:
    first = demo(tmp_path / "out", tmp_path / "bench")
    assert first.returncode == 0, first.stderr
    for needle in (
        "frozen split",
        "Pools (video units",
        "baseline on val",
        "baseline on test",
        "Per task type",
        "simulator ground truth for this bundle on val",
        "everything is in",
    ):
        assert needle in first.stdout, needle
    for name in (
        "split/pools.json",
        "split/split_manifest.json",
        "bundle/system.md",
        "runs.sqlite",
        "cache.sqlite",
    ):
        assert (tmp_path / "out" / name).exists(), name
    second = demo(tmp_path / "out", tmp_path / "bench")
    assert second.returncode == 0, second.stderr
    assert "reusing the frozen split" in second.stdout
    assert "reusing the bundle" in second.stdout

    def overall(text: str) -> list[str]:
        return re.findall(r"│ all\s+│[^\n]+", text)

    assert overall(first.stdout) == overall(second.stdout), "same split, bundle and cache: same numbers"
    assert len(overall(first.stdout)) == 2


def test_demo_folders_that_are_files_are_one_clear_error(tmp_path: Path) -> None:
    (tmp_path / "taken").write_text("keep me")
    for flag in ("--out", "--bench-cache"):
        args = {"--out": str(tmp_path / "out"), "--bench-cache": str(tmp_path / "bench")} | {
            flag: str(tmp_path / "taken")
        }
        result = subprocess.run(
            [sys.executable, "-m", "skillharness.cli", "demo", *(x for kv in args.items() for x in kv)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert result.returncode == 2, result.stderr
        assert f"error: {flag} {tmp_path / 'taken'}: exists and is not a folder" in result.stderr
        assert "Traceback" not in result.stderr
    assert (tmp_path / "taken").read_text() == "keep me"
