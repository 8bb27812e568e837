"""``ended_run``: a resume sees a run as ended only when its end's final scores are stored."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillharness.store import RunMetric, RunStore
from skillharness.train.loop.training import TrainRequest, ended_run
from skillharness.train.state.checkpoint import Checkpoint, RunState


@pytest.mark.parametrize(("stop", "ended"), [("end", True), ("budget", False), ("interrupted", False)])
def test_a_stops_final_metric_is_not_the_ends(tmp_path: Path, stop: str, ended: bool) -> None:
    """Killed after its checkpoint ended and before its final scores were written, a run that an
    earlier stop (budget, Ctrl-C) left a ``final`` of has not ended: its resume writes the scores."""
    folder = tmp_path / "runs" / "r"
    folder.mkdir(parents=True)
    Checkpoint(run_id="r", baseline_run_id="r.baseline", state=RunState.FINISHED).save(folder)
    url = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    with RunStore.open(url) as store:
        store.upsert([RunMetric(run_id="r", name="final", value={"stop": stop, "version": "v0001"})])
    found = ended_run(TrainRequest(run_id="r", folder=folder, resume=True), url)
    assert (found is not None) is ended
