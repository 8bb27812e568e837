"""The one join of the questions file and pools.json, the pool names, and the unit rule.

On the shared ``bench`` (read only: changed files are written to ``tmp_path``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench_support import Bench
from skillharness.data import (
    DataConfig,
    Pool,
    group_units,
    load_pool_questions,
    load_pools,
    load_questions,
    select_pool,
)
from skillharness.errors import ConfigError, SplitError


def _data(bench: Bench, **changes: object) -> DataConfig:
    return DataConfig.model_validate({"questions": bench.questions, "pools": bench.pools, **changes})


def test_pools_are_an_enum_and_a_wrong_name_is_a_config_error() -> None:
    assert [str(p) for p in Pool] == ["train", "val", "test"]
    assert Pool.named("val") is Pool.VAL
    with pytest.raises(ConfigError, match=r"--pool must be one of train, val, test, got 'vall'"):
        Pool.named("vall", what="--pool")


def test_a_pool_holds_its_questions_in_pools_json_order(bench: Bench) -> None:
    chosen, frozen = load_pool_questions(_data(bench), (Pool.VAL, Pool.TEST), purpose="a test")
    assert set(chosen) == {Pool.VAL, Pool.TEST}
    for pool, questions in chosen.items():
        assert tuple(q.question_id for q in questions) == frozen.questions[pool]


def test_every_pool_is_selected_alike_by_infer_training_and_holdout(bench: Bench) -> None:
    frozen = load_pools(bench.pools)
    by_id = {q.question_id: q for q in load_questions(bench.questions)}
    chosen, _ = load_pool_questions(_data(bench), tuple(Pool), purpose="a test")
    for pool in Pool:
        assert select_pool(by_id, frozen, pool, bench.questions) == chosen[pool]


def test_a_split_of_another_questions_file_names_the_missing_questions(bench: Bench, tmp_path: Path) -> None:
    rows = json.loads(bench.questions.read_text(encoding="utf-8"))
    frozen = load_pools(bench.pools)
    dropped = frozen.questions[Pool.VAL][0]
    smaller = tmp_path / "questions.json"
    smaller.write_text(json.dumps([r for r in rows if r["question_id"] != dropped]), encoding="utf-8")
    with pytest.raises(ConfigError, match=rf"names 1 val question\(s\) not in {smaller}: {dropped}"):
        load_pool_questions(_data(bench, questions=smaller), (Pool.VAL,), purpose="a test")
    # The other pools still load: only the pool that names the question is refused.
    chosen, _ = load_pool_questions(_data(bench, questions=smaller), (Pool.TRAIN,), purpose="a test")
    assert len(chosen[Pool.TRAIN]) == len(frozen.questions[Pool.TRAIN])


@pytest.mark.parametrize("missing", ["questions", "pools"])
def test_an_unset_file_names_the_key_and_who_needs_it(bench: Bench, missing: str) -> None:
    with pytest.raises(ConfigError, match=rf"training needs data\.{missing}"):
        load_pool_questions(_data(bench, **{missing: None}), (Pool.TRAIN,), purpose="training")


def test_units_of_a_pool_are_the_units_the_split_dealt(bench: Bench) -> None:
    chosen, frozen = load_pool_questions(_data(bench), tuple(Pool), purpose="a test")
    for pool in Pool:
        units = frozen.units_of(chosen[pool])
        assert {unit[0].video_id for unit in units} == set(frozen.units[pool])
        assert all(len({q.video_id for q in unit}) == 1 for unit in units)
        assert sum(len(unit) for unit in units) == len(chosen[pool])


def test_question_units_keep_every_question_alone(bench: Bench) -> None:
    questions = load_questions(bench.questions)
    assert [unit for unit in group_units(questions, "question")] == [(q,) for q in questions]
    assert len(group_units(questions, "video")) == len({q.video_id for q in questions}) < len(questions)


def test_a_pools_file_with_an_unknown_unit_is_refused(bench: Bench, tmp_path: Path) -> None:
    doc = json.loads(bench.pools.read_text(encoding="utf-8"))
    doc["unit"] = "scene"
    bad = tmp_path / "pools.json"
    bad.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(SplitError, match="unit must be one of"):
        load_pools(bad)


def _edited_pools(bench: Bench, tmp_path: Path, edit: object) -> Path:
    doc = json.loads(bench.pools.read_text(encoding="utf-8"))
    edit(doc["pools"])  # type: ignore[operator]
    path = tmp_path / "pools.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def test_a_pools_file_listing_a_question_twice_or_in_two_pools_is_refused(
    bench: Bench, tmp_path: Path
) -> None:
    """With no ``data.pools_sha256`` nothing else catches a hand edit: a question listed twice
    counts twice in every accuracy, and one in both val and test leaks into the holdout."""
    frozen = load_pools(bench.pools)
    val_q, test_q = frozen.questions[Pool.VAL][0], frozen.questions[Pool.TEST][0]
    twice = _edited_pools(bench, tmp_path, lambda p: p["val"]["question_ids"].append(val_q))
    with pytest.raises(SplitError, match=rf"question id '{val_q}' is listed 2 times in val") as info:
        load_pools(twice)
    assert info.value.context["file"] == str(twice)
    leaked = _edited_pools(bench, tmp_path, lambda p: p["test"]["question_ids"].append(val_q))
    with pytest.raises(SplitError, match=rf"question id '{val_q}' is in both val and test"):
        load_pools(leaked)
    unit = frozen.units[Pool.TEST][0]
    shared = _edited_pools(bench, tmp_path, lambda p: p["val"]["units"].append(unit))
    with pytest.raises(SplitError, match=rf"unit '{unit}' is in both val and test"):
        load_pools(shared)
    assert test_q not in frozen.questions[Pool.VAL]


def test_infer_on_an_empty_pool_is_refused_before_any_run(bench: Bench, tmp_path: Path) -> None:
    from skillharness.config import Config
    from skillharness.infer import load_job

    empty = _edited_pools(bench, tmp_path, lambda p: p["test"].update(question_ids=[], units=[]))
    config = Config.model_validate(
        {"data": {"questions": str(bench.questions), "pools": str(empty)}, "agent": {"bundle": str(tmp_path)}}
    )
    with pytest.raises(ConfigError, match=rf"--pool test: {empty} has an empty test pool: nothing to answer"):
        load_job(config, pool=Pool.TEST, run_id="r", resume=False)
