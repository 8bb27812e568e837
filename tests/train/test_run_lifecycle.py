"""One command line starts a run and continues it after any stop; an ended run stays ended."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import sqlalchemy
import yaml
from loop_support import decisions, loop_config, train_once

from bench_support import Bench
from skillharness.config import load_config
from skillharness.data import Pool
from skillharness.errors import ConfigError
from skillharness.sim import SimServer, decisive_world
from skillharness.store import RunMetric, RunReader
from skillharness.train.loop.training import RunEnded, run_folder
from skillharness.train.state.checkpoint import CHECKPOINT_FILE, Checkpoint, RunState

pytestmark = pytest.mark.slow


def _metric_names(config: Path, run_id: str) -> list[str]:
    with RunReader(load_config(config).store) as reader:
        return sorted(m.name for m in reader.ledger(RunMetric, run_id=run_id))


def _runs(config: Path) -> set[str]:
    with RunReader(load_config(config).store) as reader:
        return {r.run_id for r in reader.runs()}


async def test_resuming_an_ended_run_trains_nothing_and_finishes_only_a_missing_epilogue(
    train_bench: Bench, experiment: Path
) -> None:
    """A stopped_early run resumed: no other epoch (issue: it trained a whole one), state kept."""
    world = decisive_world(5, insight_rate=0.0, harmful_rate=0.0)
    with SimServer(world, questions=train_bench.questions) as sim:
        config = loop_config(experiment, train_bench, sim, epochs=6, early_stop_patience=1)
        first = await train_once(config, "t-ended")
        assert first.checkpoint.state is RunState.STOPPED_EARLY
        folder = run_folder(config.parent, "t-ended")
        saved = (folder / CHECKPOINT_FILE).read_text()
        names, rows, runs = _metric_names(config, "t-ended"), decisions(config, "t-ended"), _runs(config)
        with pytest.raises(RunEnded, match="stopped_early"):
            await train_once(config, "t-ended", resume=True)
        assert (folder / CHECKPOINT_FILE).read_text() == saved
        assert _metric_names(config, "t-ended") == names
        assert _runs(config) == runs
        # Killed after the ended checkpoint, before the final scores: a resume writes them, no more.
        with sqlalchemy.create_engine(load_config(config).store.url).begin() as conn:
            conn.exec_driver_sql("DELETE FROM run_metrics WHERE run_id = 't-ended' AND name = 'final'")
        again = await train_once(config, "t-ended", resume=True)
        assert again.checkpoint.state is RunState.STOPPED_EARLY
        assert again.checkpoint.epoch_end_done == first.checkpoint.epoch_end_done
        assert again.checkpoint.version == first.checkpoint.version
        assert _metric_names(config, "t-ended") == names
        assert decisions(config, "t-ended") == rows
        with pytest.raises(RunEnded):
            await train_once(config, "t-ended", resume=True)


# The first start, killed (SIGKILL) at the moment it would write its first checkpoint: the run's
# folder exists, nothing in it says how far it got.
_KILLED_AT_START = textwrap.dedent(
    """
    import os, signal, sys
    from skillharness.train.state import checkpoint
    from skillharness import cli

    def save(self, folder):
        os.kill(os.getpid(), signal.SIGKILL)
    checkpoint.Checkpoint.save = save
    sys.argv = ["skillharness", *sys.argv[1:]]
    cli.main()
    """
)


def _train(config: Path, run_id: str) -> list[str]:
    """The one command line: the same for the first start and for every restart (``--resume``
    alone refuses an id this experiment never started)."""
    return ["train", "--config", str(config), "--skip-preflight", "--resume", run_id, "--run-id", run_id]


def _test_runs(config: Path) -> set[str]:
    with RunReader(load_config(config).store) as reader:
        return {r.run_id for r in reader.runs() if r.provenance.pool == Pool.TEST}


def test_one_command_line_starts_continues_after_a_kill_at_start_up_and_then_does_nothing(
    train_bench: Bench, experiment: Path
) -> None:
    with SimServer(decisive_world(5), questions=train_bench.questions) as sim:
        config = loop_config(experiment, train_bench, sim, epochs=1)
        doc = yaml.safe_load(config.read_text())
        doc["eval"] = {"run_holdout_eval": True}
        config.write_text(yaml.safe_dump(doc))
        folder = run_folder(config.parent, "t-requeue")
        killed = subprocess.run(
            [sys.executable, "-c", _KILLED_AT_START, *_train(config, "t-requeue")],
            capture_output=True,
            timeout=300,
            check=False,
        )
        assert killed.returncode == -9, killed.stderr.decode()[-2000:]
        assert folder.is_dir()
        assert not (folder / CHECKPOINT_FILE).exists()
        cli = [sys.executable, "-m", "skillharness.cli", *_train(config, "t-requeue")]
        done = subprocess.run(cli, capture_output=True, timeout=600, check=False)
        assert done.returncode == 0, done.stderr.decode()[-2000:]
        assert Checkpoint.load(folder).state is RunState.FINISHED
        assert "holdout" in _metric_names(config, "t-requeue")
        read_once = _test_runs(config)
        assert read_once == {"t-requeue.holdout.final", "t-requeue.holdout.baseline"}
        # Killed during the end-of-training holdout: the same command line finishes that holdout,
        # on the same two eval runs, instead of reading the test pool afresh.
        with sqlalchemy.create_engine(load_config(config).store.url).begin() as conn:
            conn.exec_driver_sql("DELETE FROM run_metrics WHERE run_id = 't-requeue' AND name = 'holdout'")
        finished = subprocess.run(cli, capture_output=True, timeout=300, check=False)
        assert finished.returncode == 0, finished.stderr.decode()[-2000:]
        assert "holdout" in _metric_names(config, "t-requeue")
        assert _test_runs(config) == read_once
        metrics = _metric_names(config, "t-requeue")
        again = subprocess.run(cli, capture_output=True, timeout=300, check=False)
    assert again.returncode == 0, again.stderr.decode()[-2000:]
    said = " ".join(again.stdout.decode().split())
    assert "has ended: finished" in said
    assert "nothing to resume" in said
    assert _test_runs(config) == read_once  # no second read of the test pool
    assert _metric_names(config, "t-requeue") == metrics
    assert Checkpoint.load(folder).state is RunState.FINISHED


@pytest.mark.parametrize("resume", [False, True])
async def test_p6_a_run_id_of_another_folder_on_a_shared_store_is_refused_leaving_nothing(
    train_bench: Bench, tmp_path: Path, resume: bool
) -> None:
    """Issue 32 item 6: the refusal made a stray folder and advised a --resume that replays the other run."""
    with SimServer(decisive_world(5), questions=train_bench.questions) as sim:
        first = loop_config(tmp_path / "first", train_bench, sim, epochs=1)
        second = loop_config(tmp_path / "second", train_bench, sim, epochs=1)
        doc = yaml.safe_load(second.read_text())
        doc["store"] = {"url": load_config(first).store.url}  # one store shared by both folders
        second.write_text(yaml.safe_dump(doc))
        await train_once(first, "t-shared")
        runs = _runs(first)
        with pytest.raises(ConfigError) as info:
            await train_once(second, "t-shared", resume=resume)
    message = " ".join(str(info.value).split())
    assert f"experiment folder {run_folder(first.parent, 't-shared').resolve()}" in message
    assert "Choose a new --run-id" in message
    assert "--resume" not in message
    assert not run_folder(second.parent, "t-shared").exists()
    assert _runs(first) == runs
