"""A resume compares the run's classified settings: it names what changed, and survives a move."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest
import yaml
from infer_support import PACED_WORLD, Bench, write_config

from cli_support import run_cli as cli
from skillharness.config import load_config
from skillharness.errors import StoreError
from skillharness.infer import load_job, run_inference
from skillharness.sim import SimServer
from skillharness.store import RunMetric, RunReader

pytestmark = pytest.mark.sim_world(PACED_WORLD)


def _run(path: Path, run_id: str, *, resume: bool, flags: dict[str, object] | None = None) -> int:
    job = load_job(load_config(path, flags), pool="val", run_id=run_id, resume=resume)
    return asyncio.run(run_inference(job)).asked


@pytest.mark.slow
def test_a_refused_resume_names_each_changed_setting(tmp_path: Path, bench: Bench, sim: SimServer) -> None:
    path = write_config(tmp_path / "exp.yaml", bench, sim)
    assert _run(path, "named", resume=False) > 0
    with RunReader(f"sqlite:///{tmp_path / 'runs.sqlite'}") as reader:
        [stored] = reader.ledger(RunMetric, run_id="named", name="settings")
    assert stored.value == load_config(path).for_run("named").settings()  # the seed salt resolved
    assert stored.value["agent.samples"] == 1
    refused = cli(
        "infer", "--config", str(path), "--pool", "val", "--run-id", "named", "--resume",
        "--samples", "2", "--no-vision", "--concurrency", "2",
    )  # fmt: skip
    assert refused.returncode != 0
    message = " ".join(refused.stderr.split())
    assert "cannot resume run 'named': its provenance differs in 2 setting(s)" in message, refused.stderr
    assert "agent.samples: stored 1, now 2" in message
    assert "agent.vision: stored true, now false" in message
    assert "concurrency" not in message, "an operational setting is not a difference"
    assert "Traceback" not in refused.stderr


def test_an_operational_change_resumes_and_a_train_setting_does_not_block_infer(
    tmp_path: Path, bench: Bench, sim: SimServer
) -> None:
    path = write_config(tmp_path / "exp.yaml", bench, sim)
    asked = _run(path, "ops", resume=False)
    flags = {
        "agent.concurrency": 1,
        "train.epochs": 7,
        "train.gate.alpha": 0.01,
        "eval.run_holdout_eval": True,
    }
    assert _run(path, "ops", resume=True, flags=flags) == 0, "nothing left to ask, and nothing refused"
    assert asked > 0


def test_moving_the_experiment_folder_keeps_resume_working(
    tmp_path: Path, bench: Bench, sim: SimServer
) -> None:
    here = tmp_path / "here"
    shutil.copytree(bench.root, here / "bench")
    shutil.copytree(bench.bundle, here / "bundle")
    shutil.copy(bench.pools, here / "pools.json")
    doc = yaml.safe_load(write_config(here / "exp.yaml", bench, sim).read_text())
    doc["data"] = {
        "questions": f"bench/{bench.questions.relative_to(bench.root)}",
        "pools": "pools.json",
        "videos_dir": "bench/videos",
        "subtitles_dir": "bench/subtitles",
    }
    doc["agent"] |= {"bundle": "bundle", "frames": {"cache_dir": str(tmp_path / "frames")}}
    doc["store"] = {"url": "sqlite:///runs.sqlite"}
    doc["cache"] = {"url": "sqlite:///cache.sqlite"}
    (here / "exp.yaml").write_text(yaml.safe_dump(doc))
    asked = _run(here / "exp.yaml", "moved", resume=False)
    shutil.move(here, tmp_path / "there")
    assert _run(tmp_path / "there/exp.yaml", "moved", resume=True) == 0
    (tmp_path / "there/bundle/system.md").write_text("A different system prompt.\n")
    with pytest.raises(StoreError, match=r'agent\.bundle: stored "bundle:'):
        _run(tmp_path / "there/exp.yaml", "moved", resume=True)
    assert asked > 0
