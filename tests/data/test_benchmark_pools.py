"""``data.benchmark`` carries through the pipeline: the split, its verification and every pool read
go through the benchmark's adapter, for any number of task types (one, or MVBench's 20)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from cli_support import command_app
from skillharness.commands import split as split_command
from skillharness.data import (
    DataConfig,
    Pool,
    SplitParams,
    builtin_adapters,
    load_pool_questions,
    make_split,
    read_questions,
    verify_split,
)
from skillharness.errors import DataError
from skillharness.train.config import GateConfig
from skillharness.train.validate.coverage import class_coverage

_TASKS = tuple(builtin_adapters()["mvbench"].task_names)  # the 20 file stems


def _mvbench(root: Path, videos_per_task: int = 6) -> Path:
    """An MVBench-style folder: json/<task>.json, 3 to 5 candidates, answers as text, some clips."""
    folder = root / "json"
    folder.mkdir(parents=True)
    for t, task in enumerate(_TASKS):
        rows: list[dict[str, Any]] = []
        for v in range(videos_per_task):
            count = 3 + (t + v) % 3
            candidates = [f"{task} choice {k}" for k in range(count)]
            row = {
                "video": f"{task}_{v}.mp4",
                "question": f"What happens in {task} {v}?",
                "candidates": candidates,
                "answer": candidates[(t * 7 + v) % count],
            }
            if v % 2:
                row |= {"start": 1.0 + v, "end": 4.0 + v}
            rows.append(row)
        (folder / f"{task}.json").write_text(json.dumps(rows))
    return folder


def _egoschema_like(root: Path, n: int) -> Path:
    """One task type only: EgoSchema's questions.json and subset_answers.json."""
    rows = [
        {
            "q_uid": f"q{i:03d}",
            "question": f"What did c do {i}?",
            **{f"option {k}": f"act {k}" for k in range(5)},
        }
        for i in range(n)
    ]
    (root / "questions.json").write_text(json.dumps(rows))
    (root / "subset_answers.json").write_text(json.dumps({f"q{i:03d}": i % 5 for i in range(n)}))
    return root / "questions.json"


def _split_cli(*args: str) -> Any:
    return CliRunner().invoke(command_app(split_command.register), ["split", *args])


def test_the_default_benchmark_is_videomme_and_an_unknown_one_is_named() -> None:
    assert DataConfig().benchmark == "videomme"
    with pytest.raises(ValueError, match="unknown benchmark 'mvbnech'"):
        DataConfig(benchmark="mvbnech")


def test_split_of_twenty_task_types_reads_through_the_adapter_and_verifies(tmp_path: Path) -> None:
    source = _mvbench(tmp_path)
    out = tmp_path / "split"
    result = _split_cli(
        "--questions", str(source), "--benchmark", "mvbench", "--out", str(out),
        "--sizes", "40,40,40", "--min-val-per-class", "2",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    manifest = json.loads((out / "split_manifest.json").read_text())
    assert manifest["source"]["benchmark"] == "mvbench"
    assert len(manifest["counts"]["val"]) == 20, "every one of the 20 task types reaches val"
    assert all(sum(c.values()) >= 2 for c in manifest["counts"]["val"].values())
    assert manifest["unmet_min_val_per_class"] == []
    assert verify_split(out) == []
    (source / "action_count.json").write_text("[]")
    assert any("sha256" in p for p in verify_split(out)), "a changed file in the folder is caught"


def test_pools_of_a_non_videomme_benchmark_are_read_through_its_adapter(tmp_path: Path) -> None:
    source = _mvbench(tmp_path)
    out = tmp_path / "split"
    assert _split_cli("--questions", str(source), "--benchmark", "mvbench", "--out", str(out)
                      , "--sizes", "60,30,30").exit_code == 0  # fmt: skip
    data = DataConfig(questions=source, pools=out / "pools.json", benchmark="mvbench")
    chosen, _ = load_pool_questions(data, tuple(Pool), purpose="test")
    assert sum(len(qs) for qs in chosen.values()) == 120
    letters = {len(q.letters) for qs in chosen.values() for q in qs}
    assert letters == {3, 4, 5}
    clipped = [q for q in chosen[Pool.VAL] if q.clip_start is not None]
    assert clipped, "clip windows survive the pools"
    with pytest.raises(DataError, match="adapter 'videomme'"):
        load_pool_questions(DataConfig(questions=source, pools=out / "pools.json"), (Pool.VAL,), purpose="t")


def test_one_task_type_splits_and_its_coverage_is_judged(tmp_path: Path) -> None:
    source = _egoschema_like(tmp_path, 60)
    questions = read_questions(source, "egoschema")
    assert {q.task_type for q in questions} == {"Egocentric Reasoning"}
    split = make_split(questions, SplitParams(sizes=(20, 10, 20), unit="question", min_val_per_class=25))
    assert split.unmet_min_val == ("Egocentric Reasoning",), "val holds 10 units: 25 cannot be reached"
    split = make_split(questions, SplitParams(sizes=(20, 20, 20), unit="question", min_val_per_class=20))
    assert split.unmet_min_val == ()
    result = _split_cli(
        "--questions", str(source), "--benchmark", "egoschema", "--out", str(tmp_path / "s"),
        "--sizes", "20,7,33", "--unit", "question",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "Egocentric Reasoning" in result.output
    data = DataConfig(questions=source, pools=tmp_path / "s" / "pools.json", benchmark="egoschema")
    chosen, frozen = load_pool_questions(data, (Pool.TRAIN, Pool.VAL), purpose="test")
    assert (len(chosen[Pool.TRAIN]), len(chosen[Pool.VAL])) == (20, 7)
    gate = GateConfig()
    coverage = class_coverage([*chosen[Pool.TRAIN], *chosen[Pool.VAL]], frozen, gate, 0.7)
    assert list(coverage) == ["Egocentric Reasoning"]
    assert gate.min_distinct > 7
    assert coverage["Egocentric Reasoning"].micro, "7 distinct val questions < the default min_distinct"


def test_a_users_adapter_file_is_recorded_by_its_absolute_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    adapter = tmp_path / "gestures.yaml"
    adapter.write_text(
        "format: jsonl\nvideo_id: clip\nquestion: q\ntask_type: {field: kind}\n"
        "options: {form: list, field: choices}\nanswer: {field: gold, form: index0}\n"
    )
    lines = [
        {
            "clip": f"c{i}",
            "q": "Which gesture?",
            "kind": f"K{i % 25}",
            "choices": ["wave", "nod"],
            "gold": i % 2,
        }
        for i in range(100)
    ]
    (tmp_path / "q.jsonl").write_text("\n".join(json.dumps(line) for line in lines))
    out = tmp_path / "split"
    monkeypatch.chdir(tmp_path)  # relative --questions and --benchmark, as a user types them
    result = _split_cli(
        "--questions", "q.jsonl", "--benchmark", "gestures.yaml", "--out", str(out),
        "--sizes", "25,50,25", "--min-val-per-class", "2",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    manifest = json.loads((out / "split_manifest.json").read_text())
    assert manifest["source"]["benchmark"] == str(adapter.resolve())
    assert len(manifest["counts"]["val"]) == 25, "25 task types"
    assert all(sum(c.values()) >= 2 for c in manifest["counts"]["val"].values())
    monkeypatch.chdir(Path("/"))
    assert verify_split(out) == [], "verify re-reads through the recorded adapter file"
