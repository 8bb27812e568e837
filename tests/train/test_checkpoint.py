"""The training checkpoint: one versioned type, written atomically (audit P1-7)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from skillharness.errors import ConfigError
from skillharness.train.state.checkpoint import (
    CHECKPOINT_FILE,
    CHECKPOINT_SCHEMA_VERSION,
    AcceptedEdit,
    Checkpoint,
    RunState,
    Spent,
)
from skillharness.train.state.records import RejectedEdit

_CHILD = textwrap.dedent(
    """
    import os, signal, sys
    from pathlib import Path
    from skillharness.train.state.checkpoint import Checkpoint

    folder = Path(sys.argv[1])
    ckpt = Checkpoint.load(folder)
    real = os.replace
    def killing(src, dst):
        if Path(dst).name == "checkpoint.json":
            os.kill(os.getpid(), signal.SIGKILL)  # die between the temp write and the replace
        return real(src, dst)
    os.replace = killing
    ckpt.model_copy(update={"step": 99, "version": "v0042"}).save(folder)
    """
)


def _checkpoint() -> Checkpoint:
    return Checkpoint(run_id="r", baseline_run_id="r.baseline", best_score=0.4, ema={"OCR Problems": 0.4})


def test_p1_7_checkpoint_write_is_atomic(tmp_path: Path) -> None:
    """A process killed during the checkpoint write leaves the previous checkpoint readable."""
    before = _checkpoint().model_copy(update={"step": 3, "version": "v0002"})
    before.save(tmp_path)
    child = subprocess.run(
        [sys.executable, "-c", _CHILD, str(tmp_path)], capture_output=True, timeout=60, check=False
    )
    assert child.returncode == -signal.SIGKILL, child.stderr.decode()
    assert any(p.name.startswith(f".{CHECKPOINT_FILE}.") for p in tmp_path.iterdir())  # debris of the kill
    after = Checkpoint.load(tmp_path)
    assert after == before
    assert after.step == 3


def test_round_trip_keeps_every_field(tmp_path: Path) -> None:
    ckpt = (
        _checkpoint()
        .remember_rejection(
            "skill:ocr_problems", RejectedEdit(rationale="r", edits_json="{}", outcome="x"), 5
        )
        .remember_accept("system", AcceptedEdit(target="system", rationale="a", edits_json="{}"))
        .model_copy(
            update={
                "momentum_done": ["1:skill:ocr_problems"],
                "alpha_spent": 0.15,
                "gates_run": 3,
                "next_sample": 57,
            }
        )
    )
    ckpt.save(tmp_path)
    assert Checkpoint.load(tmp_path) == ckpt


def test_a_checkpoint_written_before_the_sample_counter_starts_gates_at_one(tmp_path: Path) -> None:
    data = _checkpoint().model_dump(mode="json")
    del data["next_sample"]
    (tmp_path / CHECKPOINT_FILE).write_text(json.dumps(data))
    assert Checkpoint.load(tmp_path).next_sample == 1  # 0 is the val score's sample


def test_rejected_memory_keeps_only_the_newest(tmp_path: Path) -> None:
    ckpt = _checkpoint()
    for i in range(7):
        ckpt = ckpt.remember_rejection(
            "system", RejectedEdit(rationale=str(i), edits_json="{}", outcome=""), 3
        )
    assert [r.rationale for r in ckpt.rejected["system"]] == ["4", "5", "6"]
    assert _checkpoint().remember_rejection(
        "system", RejectedEdit(rationale="x", edits_json="", outcome=""), 0
    ).rejected == {"system": []}


@pytest.mark.parametrize(
    ("content", "match"),
    [
        ("{not json", "unreadable"),
        (json.dumps({"schema_version": 99}), "schema version 99"),
        ('{"schema_version": 1}', "invalid"),
    ],
)
def test_a_bad_checkpoint_is_named(tmp_path: Path, content: str, match: str) -> None:
    (tmp_path / CHECKPOINT_FILE).write_text(content)
    with pytest.raises(ConfigError, match=match):
        Checkpoint.load(tmp_path)


def test_a_missing_checkpoint_says_there_is_nothing_to_resume(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="nothing to resume"):
        Checkpoint.load(tmp_path)
    assert RunState.INTERRUPTED.value == "interrupted"


# A checkpoint as schema 1 wrote it (before open candidates): every field it had, none it lacked.
_SCHEMA_1 = {
    "schema_version": 1,
    "run_id": "r",
    "baseline_run_id": "r.baseline",
    "state": "interrupted",
    "epoch": 2,
    "step": 3,
    "target_index": 1,
    "decision_index": 7,
    "gates_run": 6,
    "next_sample": 40,
    "version": "v0003",
    "step_version": "v0002",
    "step_gates_run": 5,
    "retired": {},
    "rejected": {"skill:ocr_problems": [{"rationale": "r", "edits_json": "{}", "outcome": "reject_inertia"}]},
    "accepted_this_epoch": {},
    "ema": {"OCR Problems": 0.4},
    "best_score": 0.4,
    "epochs_without_improvement": 0,
    "momentum_done": [],
    "epoch_end_done": 1,
    "alpha_spent": 0.3,
    "stop_reason": "call budget reached",
}


def test_a_schema_1_checkpoint_is_upgraded_with_no_open_candidates(tmp_path: Path) -> None:
    """A run interrupted before open candidates existed resumes: its cursor and memory kept, none open."""
    (tmp_path / CHECKPOINT_FILE).write_text(json.dumps(_SCHEMA_1))
    ckpt = Checkpoint.load(tmp_path)
    assert ckpt.schema_version == CHECKPOINT_SCHEMA_VERSION == 3
    assert (ckpt.epoch, ckpt.step, ckpt.target_index, ckpt.decision_index) == (2, 3, 1, 7)
    assert (ckpt.next_sample, ckpt.version, ckpt.alpha_spent) == (40, "v0003", 0.3)
    assert ckpt.rejected["skill:ocr_problems"][0].outcome == "reject_inertia"
    assert ckpt.open == []
    assert ckpt.round_fed == []
    assert ckpt.drain_rounds == 0
    ckpt.save(tmp_path)
    assert json.loads((tmp_path / CHECKPOINT_FILE).read_text())["schema_version"] == 3


def test_a_schema_2_checkpoint_is_upgraded_with_nothing_spent(tmp_path: Path) -> None:
    """A run saved before the budget was the run's resumes with the spending it can vouch for: none."""
    doc = {**_SCHEMA_1, "schema_version": 2, "open": [], "discordance": {"OCR Problems": [3, 10]}}
    (tmp_path / CHECKPOINT_FILE).write_text(json.dumps(doc))
    ckpt = Checkpoint.load(tmp_path)
    assert (ckpt.schema_version, ckpt.spent) == (3, Spent())
    assert ckpt.discordance == {"OCR Problems": [3, 10]}
    saved = ckpt.model_copy(update={"spent": Spent(calls=120, cost=0.5, wall_s=9.0)})
    saved.save(tmp_path)
    assert Checkpoint.load(tmp_path).spent == Spent(calls=120, cost=0.5, wall_s=9.0)


def test_a_schema_3_checkpoint_without_usage_reads_as_none_and_usage_round_trips(tmp_path: Path) -> None:
    """Usage by role joined the spent budget within schema 3: a checkpoint saved before has none."""
    (tmp_path / CHECKPOINT_FILE).write_text(json.dumps({**_SCHEMA_1, "schema_version": 2, "open": []}))
    doc = json.loads(json.dumps(Checkpoint.load(tmp_path).model_dump(mode="json")))
    doc["spent"] = {"calls": 7, "cost": 0.0, "wall_s": 1.0}  # as written before usage was kept
    (tmp_path / CHECKPOINT_FILE).write_text(json.dumps(doc))
    assert Checkpoint.load(tmp_path).spent == Spent(calls=7, wall_s=1.0)
    spent = Spent(calls=7, wall_s=1.0, usage={"agent": {"calls": 9.0, "cache_hits": 2.0}})
    Checkpoint.load(tmp_path).model_copy(update={"spent": spent}).save(tmp_path)
    assert Checkpoint.load(tmp_path).spent == spent


def test_a_checkpoint_of_an_unknown_schema_is_refused_naming_the_file(tmp_path: Path) -> None:
    (tmp_path / CHECKPOINT_FILE).write_text(json.dumps({**_SCHEMA_1, "schema_version": 4}))
    with pytest.raises(ConfigError, match=r"checkpoint\.json: checkpoint schema version 4"):
        Checkpoint.load(tmp_path)
