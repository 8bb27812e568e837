"""The frozen split: determinism, pool sizes, coverage, micro classes, and its artifacts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from cli_support import command_app
from cli_support import run_cli as cli
from skillharness.commands import split as split_cmd
from skillharness.commands.split import micro_verdicts
from skillharness.data.loader import load_questions
from skillharness.data.pools import load_pools, verify_split, write_split
from skillharness.data.questions import Question, TaskType
from skillharness.data.split import SplitParams, make_split
from skillharness.errors import ConfigError, SplitError
from skillharness.train.config import GateConfig

MICRO = {"Temporal Perception", "Spatial Perception", "Spatial Reasoning"}


@pytest.fixture(scope="module")
def real(videomme_questions_path: Path) -> list[Question]:
    return load_questions(videomme_questions_path)


def val_counts(split, questions) -> Counter[str]:
    by_id = {q.question_id: q for q in questions}
    return Counter(by_id[qid].task_type for u in split.pools["val"] for qid in u.question_ids)


def test_question_units_900_sample(real: list[Question]) -> None:
    params = SplitParams(sizes=(210, 90, 600), unit="question", sample=900, seed=7)
    split = make_split(real, params)
    assert [len(split.pools[p]) for p in ("train", "val", "test")] == [210, 90, 600]
    ids = [q for units in split.pools.values() for u in units for q in u.question_ids]
    assert len(ids) == len(set(ids)) == 900
    # Stratification keeps each pool's duration mix close to the whole (1/3 each in Video-MME).
    by_id = {q.question_id: q for q in real}
    for pool, units in split.pools.items():
        mix = Counter(by_id[u.question_ids[0]].duration for u in units)
        for duration in ("short", "medium", "long"):
            assert abs(mix[duration] / len(units) - 1 / 3) < 0.05, (pool, mix)
    assert make_split(real, params) == split  # deterministic for a seed
    assert make_split(real, params.model_copy(update={"seed": 8})) != split


def test_video_units_never_cross_pools(real: list[Question]) -> None:
    split = make_split(real, SplitParams(sizes=(210, 90, 600), unit="video", seed=0))
    assert [len(split.pools[p]) for p in ("train", "val", "test")] == [210, 90, 600]
    video_of = {q.question_id: q.video_id for q in real}
    pool_of_video: dict[str, str] = {}
    for pool, units in split.pools.items():
        for unit in units:
            assert {video_of[q] for q in unit.question_ids} == {unit.id}
            assert pool_of_video.setdefault(unit.id, pool) == pool
    assert sum(len(u.question_ids) for units in split.pools.values() for u in units) == 2700


def test_micro_classes_are_reported(real: list[Question]) -> None:
    """The split prints training's own micro verdict (train/validate/coverage.py): one rule, one wording."""
    split = make_split(real, SplitParams(sizes=(210, 90, 600), unit="video", seed=0))
    counts = val_counts(split, real)
    gate = GateConfig()
    for temperature in (0.0, 0.7):
        verdicts = micro_verdicts(split, real, gate, temperature).reasons
        # Fewer than min_distinct distinct val questions is micro at any temperature.
        assert {t for t in verdicts} >= {t for t, n in counts.items() if n < gate.min_distinct}
        assert set(verdicts) & MICRO, "the real data's three micro classes are short in a 90-video val pool"
        for task, reason in verdicts.items():
            if counts.get(task, 0) < gate.min_distinct:
                assert f"{counts.get(task, 0)} distinct val question(s) < train.gate.min_distinct" in reason


def test_p0_3_val_covers_every_trained_class(real: list[Question]) -> None:
    k = GateConfig().min_distinct
    split = make_split(real, SplitParams(sizes=(210, 90, 600), unit="video", seed=3, min_val_per_class=k))
    counts = val_counts(split, real)
    micro = set(micro_verdicts(split, real, GateConfig(), 0.7).reasons)
    for task in (t.value for t in TaskType):
        if task not in micro:
            assert counts[task] >= k, (task, counts[task])
    assert set(split.unmet_min_val) <= micro
    assert [len(split.pools[p]) for p in ("train", "val", "test")] == [210, 90, 600]


def test_unreachable_minimum_is_reported_not_hidden(tmp_path: Path, real: list[Question]) -> None:
    split = make_split(
        real, SplitParams(sizes=(60, 20, 100), unit="video", sample=180, seed=1, min_val_per_class=40)
    )
    assert split.unmet_min_val, "40 val questions per class cannot fit in 20 videos"
    counts = val_counts(split, real)
    assert all(counts[t] < 40 for t in split.unmet_min_val)
    assert all(counts[t] >= 40 for t in counts if t not in split.unmet_min_val)


def test_sizes_larger_than_the_data_are_refused(real: list[Question]) -> None:
    needle = "--sizes 400,100,500 needs 1000 video units, but the questions hold only 900"
    with pytest.raises(SplitError, match=needle):
        make_split(real, SplitParams(sizes=(400, 100, 500), unit="video"))


def test_excluded_task_types_leave_the_pools(real: list[Question]) -> None:
    split = make_split(
        real, SplitParams(sizes=(600, 300, 1600), unit="question", exclude_task_types=tuple(MICRO))
    )
    by_id = {q.question_id: q for q in real}
    kept = {by_id[q].task_type for units in split.pools.values() for u in units for q in u.question_ids}
    assert not kept & MICRO


def test_artifacts_verify_and_detect_tampering(
    tmp_path: Path, real: list[Question], videomme_questions_path: Path
) -> None:
    split = make_split(real, SplitParams(sizes=(210, 90, 600), unit="question", sample=900))
    out = tmp_path / "split"
    written = write_split(split, real, videomme_questions_path, out, force=False, version="test")
    manifest = json.loads(written.manifest_path.read_text())
    assert manifest["pools_sha256"] == written.pools_sha256
    assert manifest["source"]["sha256"]
    assert manifest["parameters"]["sample"] == 900
    assert sum(sum(d.values()) for d in manifest["counts"]["val"].values()) == 90
    assert verify_split(out) == []
    pools = load_pools(written.pools_path, written.pools_sha256)
    assert len(pools.questions["test"]) == 600
    doc = json.loads(written.pools_path.read_text())
    doc["pools"]["val"]["question_ids"].append(doc["pools"]["test"]["question_ids"][0])
    written.pools_path.write_text(json.dumps(doc))
    problems = verify_split(out)
    assert problems
    assert "does not match" in problems[0]
    with pytest.raises(SplitError, match="does not match the expected"):
        load_pools(written.pools_path, written.pools_sha256)


@pytest.mark.slow
def test_p2_1_split_refuses_to_overwrite_without_force(tmp_path: Path, videomme_questions_path: Path) -> None:
    out = tmp_path / "split"
    args = [
        "split",
        "--questions",
        str(videomme_questions_path),
        "--out",
        str(out),
        "--unit",
        "question",
        "--sample",
        "900",
    ]
    first = cli(*args)
    assert first.returncode == 0, first.stderr
    assert "Micro classes" in first.stdout
    assert "val" in first.stdout
    original = (out / "pools.json").read_bytes()
    again = cli(*args, "--seed", "5")
    assert again.returncode != 0
    assert "already exist" in again.stderr
    assert "pools.json (sha256" in again.stderr
    assert "--force" in again.stderr
    assert (out / "pools.json").read_bytes() == original, "a refused split must not touch the artifacts"
    forced = cli(*args, "--seed", "5", "--force")
    assert forced.returncode == 0, forced.stderr
    backups = list(out.glob("backup-*"))
    assert len(backups) == 1, backups
    assert "old ones are in" in forced.stdout.replace("\n", " ")
    assert (backups[0] / "pools.json").read_bytes() == original
    assert (out / "pools.json").read_bytes() != original
    verified = cli("split", "verify", str(out))
    assert verified.returncode == 0, verified.stderr
    (out / "pools.json").write_text("{}")
    broken = cli("split", "verify", str(out))
    assert broken.returncode != 0
    assert "does NOT verify" in broken.stderr


def test_split_is_identical_across_python_hash_seeds(videomme_questions_path: Path) -> None:
    # Sets and dicts of strings iterate in a hash-seed-dependent order; the frozen pools must not.
    probe = (
        "import hashlib, json, sys\n"
        "from skillharness.data.loader import load_questions\n"
        "from skillharness.data.pools import _pools_document\n"
        "from skillharness.data.split import SplitParams, make_split\n"
        "questions = load_questions(sys.argv[1])\n"
        "for unit in ('video', 'question'):\n"
        "    params = SplitParams(sizes=(210, 90, 600), unit=unit, sample=900, min_val_per_class=8, seed=4)\n"
        "    doc = _pools_document(make_split(questions, params))\n"
        "    print(hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest())\n"
    )
    digests = set()
    for hash_seed in ("0", "1"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        proc = subprocess.run(
            [sys.executable, "-c", probe, str(videomme_questions_path)],
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
        )
        assert proc.returncode == 0, proc.stderr
        digests.add(proc.stdout)
    assert len(digests) == 1, digests


def test_split_parameter_edge_cases_are_refused() -> None:
    with pytest.raises(ValidationError, match="all 0"):
        SplitParams(sizes=(0, 0, 0))
    with pytest.raises(ValidationError, match=">= 0"):
        SplitParams(sizes=(10, -1, 5))
    assert SplitParams(sizes=(0, 5, 0)).sizes == (0, 5, 0)


@pytest.mark.parametrize(
    ("flags", "needle"),
    [
        (["--sizes", "1,-1,1"], "--sizes 1,-1,1: pool sizes must be >= 0"),
        (["--sizes", "0,0,0"], "--sizes 0,0,0: pool sizes are all 0"),
        (["--sample", "0"], "--sample 0: Input should be greater than or equal to 1"),
        (["--min-val-per-class", "-1"], "--min-val-per-class -1: Input should be greater"),
        (["--bet-cap", "0"], "--bet-cap 0.0: "),
        (["--alpha", "1.5"], "--alpha 1.5: "),
        (["--min-distinct", "0"], "--min-distinct 0: "),
        (["--n-max", "0"], "--n-max 0: "),
    ],
)
def test_bad_split_flags_are_user_errors_not_tracebacks(
    tmp_path: Path, flags: list[str], needle: str
) -> None:
    rows = [
        {
            "video_id": f"{i:03d}",
            "duration": "short",
            "domain": "",
            "sub_category": "",
            "url": "",
            "videoID": f"v{i}",
            "question_id": f"{i:03d}-1",
            "task_type": "Counting Problem",
            "question": "?",
            "options": ["A. 1", "B. 2", "C. 3", "D. 4"],
            "answer": "A",
        }
        for i in range(6)
    ]
    source = tmp_path / "q.json"
    source.write_text(json.dumps(rows))
    result = CliRunner().invoke(
        command_app(split_cmd.register),
        ["split", "--questions", str(source), "--out", str(tmp_path / "o"), *flags],
    )
    assert isinstance(result.exception, ConfigError), result.exception
    assert needle in str(result.exception)
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    "manifest", ["[]", '{"pools_sha256": "x"}', '{"source": {}, "pools_sha256": "x"}', '{"counts": {}}']
)
def test_verify_reports_a_malformed_manifest_instead_of_crashing(tmp_path: Path, manifest: str) -> None:
    (tmp_path / "split_manifest.json").write_text(manifest)
    (tmp_path / "pools.json").write_text("{}")
    problems = verify_split(tmp_path)
    assert len(problems) == 1
    assert "unreadable manifest" in problems[0]


def test_verify_checks_the_recorded_pool_sizes(
    tmp_path: Path, real: list[Question], videomme_questions_path: Path
) -> None:
    split = make_split(real, SplitParams(sizes=(21, 9, 60), unit="video", sample=90))
    written = write_split(split, real, videomme_questions_path, tmp_path, force=False, version="test")
    assert verify_split(tmp_path) == []
    manifest = json.loads(written.manifest_path.read_text())
    manifest["pool_sizes"]["val"]["units"] = 10
    written.manifest_path.write_text(json.dumps(manifest))
    problems = verify_split(tmp_path)
    assert len(problems) == 1
    assert "pool sizes" in problems[0]


def test_a_misspelt_excluded_task_type_is_refused(real: list[Question]) -> None:
    params = SplitParams(sizes=(210, 90, 600), unit="question", exclude_task_types=("Spatial Perceptoin",))
    with pytest.raises(SplitError, match="not in the questions: Spatial Perceptoin"):
        make_split(real, params)


def test_an_out_path_that_is_a_file_is_a_split_error(
    tmp_path: Path, real: list[Question], videomme_questions_path: Path
) -> None:
    split = make_split(real, SplitParams(sizes=(21, 9, 60), unit="video", sample=90))
    target = tmp_path / "not-a-folder"
    target.write_text("mine")
    with pytest.raises(SplitError, match="exists and is not a folder"):
        write_split(split, real, videomme_questions_path, target, force=True, version="test")
    assert target.read_text() == "mine"
