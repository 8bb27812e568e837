"""The README's demo command, run as a user runs it."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
from pathlib import Path

import pytest

from cli_support import run_cli
from skillharness.commands.demo import _foreign_runs
from skillharness.errors import ConfigError
from skillharness.llm.types import SamplingParams
from skillharness.store import RunKind, RunProvenance, RunStore


def demo(out: Path, cache: Path) -> subprocess.CompletedProcess[str]:
    args = ("demo", "--out", str(out), "--videos", "36", "--bench-cache", str(cache), "--latency", "0")
    return run_cli(*args, env={"COLUMNS": "80", "PATH": "/usr/bin:/bin"})


def _at_80_columns(text: str) -> None:
    """Piped at 80 columns (issue 49 item 7): progress as lines within the width, no name cut, no
    counter past its total, the calls never going back."""
    lines = text.splitlines()
    assert all(len(line) <= 80 for line in lines), [line for line in lines if len(line) > 80]
    assert "…" not in text, [line for line in lines if "…" in line]
    for done, total in re.findall(r"(?:epoch|step) (\d+)/(\d+)", text):
        assert int(done) <= int(total), (done, total)
    # Each progress entry, its continuation lines joined back on: the calls never go back.
    entries = re.findall(r"^train demo · .*(?:\n  .*)*", text, flags=re.MULTILINE)
    calls = [int(re.sub(r"\D", "", m)) for e in entries for m in re.findall(r"[\d,]+(?= calls)", e)]
    assert len(calls) == len(entries) > 3, entries[:3]
    assert calls == sorted(calls), calls


def _numbers(text: str) -> list[str]:
    """The lines that carry results: they must be identical on a re-run."""
    keep = ("val baseline", "val final", "val gain ", "alpha spent", "decisions:", "holdout gain")
    # "val gain " with its space: a wrapped sentence may go on with "val gain's interval".
    return [line.strip() for line in text.splitlines() if line.strip().startswith(keep)]


@pytest.mark.slow
def test_demo_trains_evaluates_reports_and_reruns_identically(tmp_path: Path) -> None:
    first = demo(tmp_path / "out", tmp_path / "bench")
    assert first.returncode == 0, first.stderr[-3000:]
    for needle in (
        "frozen split",
        "val questions per task type",
        "val baseline",
        "val final",
        "holdout",
        "scored truth",
        "gap closed",
        "accepted edits",
        "report:",
        "everything is in",
    ):
        assert needle in first.stdout, needle
    for name in (
        "split/pools.json",
        "bundle/system.md",
        "experiment/experiment.yaml",
        "experiment/runs/demo/checkpoint.json",
        "runs.sqlite",
        "cache.sqlite",
        "report.html",
        "report.json",
    ):
        assert (tmp_path / "out" / name).exists(), name
    page = (tmp_path / "out" / "report.html").read_text()
    sections = ('id="overview"', 'id="gates"', 'id="diagnosis"', 'id="holdout"', 'id="judge-truth"')
    for section in (*sections, 'id="transfer"'):
        assert section in page, section  # the judge's confusion against the simulator's truth too
    # The Transfer section: our agent's gain beside the gain under lmms-eval's request.
    assert "skillharness (our agent)" in page
    assert "<td>lmms_eval</td>" in page
    # Beside each measured gain, against the simulator, the oracle's truth of it.
    transfer = page.partition('id="transfer"')[2].partition("</section>")[0]
    assert "scored truth (pt)" in transfer
    assert len(re.findall(r"<td>[+-]\d+\.\d</td></tr>", transfer)) == 2, transfer
    assert "under protocol lmms_eval (bundle slot auto)" in " ".join(first.stdout.split())
    _at_80_columns(first.stdout)
    second = demo(tmp_path / "out", tmp_path / "bench")
    assert second.returncode == 0, second.stderr[-3000:]
    assert "reusing the frozen split" in second.stdout
    assert _numbers(first.stdout) == _numbers(second.stdout), "same split, bundle and cache: same numbers"
    assert len(_numbers(first.stdout)) == 6


@pytest.mark.slow
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


def _store_with_a_users_run(path: Path) -> None:
    async def write() -> None:
        provenance = RunProvenance(
            run_id="precious",
            kind=RunKind.INFER,
            config_hash="c" * 64,
            bundle_hash="b" * 64,
            pool="val",
            model="m",
            endpoints=("http://127.0.0.1:9/v1",),
            sampling=SamplingParams(temperature=0.0),
        )
        with RunStore.open(f"sqlite:///{path}") as store:
            await (await store.open_run(provenance)).close()

    asyncio.run(write())


@pytest.mark.slow
def test_demo_never_deletes_a_run_store_holding_runs_it_did_not_make(tmp_path: Path) -> None:
    out = tmp_path / "mywork"
    out.mkdir()
    _store_with_a_users_run(out / "runs.sqlite")
    before = (out / "runs.sqlite").read_bytes()
    # Relative, as a user types it: the benchmark check comes after the store check, never before.
    done = run_cli("demo", "--out", str(out), "--bench-cache", "bench", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "runs.sqlite holds runs the demo did not make (precious)" in " ".join(done.stderr.split())
    assert (out / "runs.sqlite").read_bytes() == before
    assert not (tmp_path / "bench").exists(), "refused before any work"


@pytest.mark.slow
def test_demo_with_a_relative_bench_cache_runs(tmp_path: Path) -> None:
    done = run_cli(
        "demo", "--out", "out", "--videos", "12", "--bench-cache", "b", "--latency", "0", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr[-3000:]
    written = (tmp_path / "out" / "experiment" / "experiment.yaml").read_text()
    assert str(tmp_path / "b") in written, "the experiment names the benchmark by its absolute path"
    assert (tmp_path / "out" / "report.html").is_file()


@pytest.mark.slow
def test_demo_runs_on_another_layout(tmp_path: Path) -> None:
    """``demo --layout egoschema``: five options, one task type, answers in a separate file."""
    args = (
        "demo",
        "--layout",
        "egoschema",
        "--out",
        str(tmp_path / "out"),
        "--bench-cache",
        str(tmp_path / "b"),
    )
    done = run_cli(*args, "--latency", "0", env={"COLUMNS": "160", "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr[-3000:]
    assert "layout egoschema" in done.stdout
    assert "Egocentric Reasoning" in done.stdout
    # lmms-eval's egoschema task has no instruction slot mapped: the transfer says so and the demo goes on.
    said = " ".join(done.stdout.split())
    assert "transfer not run: agent.protocol lmms_eval has no slot" in said
    assert "egoschema_subset" in said
    assert (tmp_path / "out" / "report.html").is_file()
    assert (tmp_path / "b" / "synth-v1-seed0-n96-egoschema" / "subset_answers.json").is_file()


def test_demo_store_check_tells_an_empty_store_from_a_foreign_file(tmp_path: Path) -> None:
    """A store created but never written holds nothing to lose; a file that is no run store is refused."""
    empty = tmp_path / "empty.sqlite"
    empty.write_bytes(b"")
    assert _foreign_runs(empty) == []
    garbage = tmp_path / "garbage.sqlite"
    garbage.write_bytes(b"not a database at all, but someone's file" * 100)
    with pytest.raises(ConfigError, match="is not the demo's run store"):
        _foreign_runs(garbage)
    users = tmp_path / "users.sqlite"
    _store_with_a_users_run(users)
    assert _foreign_runs(users) == ["precious"]
