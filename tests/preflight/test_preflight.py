"""run_preflight against real parts: a synthetic bench, its split, a bundle, the simulator, SQLite."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from preflight_support import FAST_RETRY, GATE, REACHABLE, UNREACHABLE, Bench, config_of, write_config

from net_support import free_port
from skillharness.data import load_pools, load_questions
from skillharness.data.questions import slugify
from skillharness.errors import ConfigError
from skillharness.sim import SimServer
from skillharness.train.preflight.checks import (
    CHECKS,
    CheckStatus,
    PreflightReport,
    run_preflight,
    run_preflight_async,
)
from skillharness.train.roles.templates import packaged_prompts


def _preflight(tmp_path: Path, bench: Bench, shared_sim: SimServer, **sections: object) -> PreflightReport:
    path = write_config(tmp_path, bench, shared_sim.base_url, shared_sim.model_name, **sections)
    return run_preflight(config_of(path), endpoint_timeout_s=3.0)


def _messages(report: PreflightReport, check: str) -> list[str]:
    return [p.message for p in report.problems if p.check == check]


def _prompts_without(tmp_path: Path, name: str) -> Path:
    folder = tmp_path / "prompts"
    folder.mkdir()
    for entry in packaged_prompts().iterdir():
        if entry.name.endswith(".md") and entry.name != name:
            (folder / entry.name).write_bytes(entry.read_bytes())
    return folder


def test_good_setup_passes_every_check(tmp_path: Path, bench: Bench, shared_sim: SimServer) -> None:
    report = _preflight(tmp_path, bench, shared_sim)
    assert report.ok, report.problems
    assert [row.check for row in report.rows()] == list(CHECKS)
    assert all(row.status is CheckStatus.PASS for row in report.rows())
    passed = {row.check: row.message for row in report.passed}
    assert "the run id" in passed["cache salt"]
    assert "Attribute Perception (val 2)" in passed["gate"]
    # The store probe left a migrated store and no run behind.
    assert (tmp_path / "runs.sqlite").is_file()


def test_named_cache_salt_is_reported(tmp_path: Path, bench: Bench, shared_sim: SimServer) -> None:
    report = _preflight(tmp_path, bench, shared_sim, cache={"salt": "shared-2026"})
    assert report.ok
    assert "shared-2026" in {r.check: r.message for r in report.passed}["cache salt"]


def test_p0_3_unreachable_gate_is_a_preflight_error(
    tmp_path: Path, bench: Bench, shared_sim: SimServer
) -> None:
    report = _preflight(tmp_path, bench, shared_sim, train={"task_types": [*REACHABLE, UNREACHABLE]})
    [message] = _messages(report, "gate")
    assert repr(UNREACHABLE) in message
    assert "1 val question(s)" in message
    assert "at least 2" in message
    assert "train.task_types" in message
    assert "--min-val-per-class 2" in message
    assert not report.ok
    assert {p.check for p in report.problems} == {"gate"}


def test_p0_3_gate_budget_below_the_minimum_is_named(
    tmp_path: Path, bench: Bench, shared_sim: SimServer
) -> None:
    report = _preflight(tmp_path, bench, shared_sim, train={"gate": {"n_max": 1}})
    messages = _messages(report, "gate")
    assert len(messages) == len(REACHABLE)
    assert all("train.gate.n_max=1" in m for m in messages)
    assert all("raise train.gate.n_max to at least 2" in m for m in messages)


def test_p0_3_unset_task_types_leave_micro_classes_out(
    tmp_path: Path, bench: Bench, shared_sim: SimServer
) -> None:
    report = _preflight(tmp_path, bench, shared_sim, train={"task_types": None})
    assert report.ok, report.problems
    gate = {r.check: r.message for r in report.passed}["gate"]
    trained, _, left_out = gate.partition("micro classes left out")
    assert all(t in trained for t in REACHABLE)
    assert f"{UNREACHABLE}: 1 distinct val question(s) < train.gate.min_distinct=2" in left_out
    assert "1 val question(s) < 2 needed for its gate to accept" in left_out


def test_p0_3_alpha_spending_names_the_last_gate_each_class_can_accept(
    tmp_path: Path, bench: Bench, shared_sim: SimServer
) -> None:
    """Geometric spending from 0.9: gate 1 gets 0.45 (2 wins), gate 2 0.225 (4 wins, 2 questions)."""
    gate = {**GATE, "alpha": 0.9, "alpha_spending": "geometric"}
    report = _preflight(tmp_path, bench, shared_sim, train={"gate": gate})
    assert report.ok, report.problems
    summary = {r.check: r.message for r in report.passed}["gate"]
    assert "alpha_spending=geometric" in summary
    assert all(f"{t} (gate 1)" in summary for t in REACHABLE)


def test_item_6_preflight_states_the_guard_size_and_cost(
    tmp_path: Path, bench: Bench, shared_sim: SimServer
) -> None:
    report = _preflight(tmp_path, bench, shared_sim)
    summary = {r.check: r.message for r in report.passed}["gate"]
    guarded = len(_val_classes(bench))
    assert f"draws on each of the {guarded} classes with val questions" in summary
    assert "sized to flag a 20% drop with probability >= 0.8" in summary
    # The power holds only up to a discordance: the one the most draws a class may take can see.
    assert "power: a 20% drop is flagged with P >= 0.80 on a class whose discordance is at most" in summary
    (tmp_path / "off").mkdir()
    off = _preflight(tmp_path / "off", bench, shared_sim, train={"gate": {**GATE, "guard_draws": 0}})
    assert "McNemar guard off" in {r.check: r.message for r in off.passed}["gate"]


def _val_classes(bench: Bench) -> set[str]:
    val = set(load_pools(bench.pools).questions["val"])
    return {q.task_type for q in load_questions(bench.questions) if q.question_id in val}


def test_unknown_trained_task_type_is_named(tmp_path: Path, bench: Bench, shared_sim: SimServer) -> None:
    report = _preflight(tmp_path, bench, shared_sim, train={"task_types": [*REACHABLE, "Juggling"]})
    [message] = _messages(report, "gate")
    assert "Juggling" in message


def test_p0_1_missing_template_is_a_preflight_error(
    tmp_path: Path, bench: Bench, shared_sim: SimServer
) -> None:
    prompts = _prompts_without(tmp_path, "evolve_skill.md")
    report = _preflight(tmp_path, bench, shared_sim, train={"prompts_dir": str(prompts)})
    messages = _messages(report, "templates")
    assert messages
    assert any("evolve_skill" in m for m in messages)
    assert {p.check for p in report.problems} == {"templates"}


def test_a_prompts_dir_that_is_a_file_is_named_as_such_with_its_setting(
    tmp_path: Path, bench: Bench, shared_sim: SimServer
) -> None:
    """It said the file "does not exist", and named no setting."""
    prompts = tmp_path / "prompts.md"
    prompts.write_text("a file, not the folder of templates\n")
    report = _preflight(tmp_path, bench, shared_sim, train={"prompts_dir": str(prompts)})
    assert _messages(report, "templates") == [
        f"prompt folder {prompts} is a file, not a folder (train.prompts_dir)"
    ]


def test_pools_sha_mismatch_is_a_preflight_error(tmp_path: Path, bench: Bench, shared_sim: SimServer) -> None:
    report = _preflight(tmp_path, bench, shared_sim, data={"pools_sha256": "0" * 64})
    [message] = _messages(report, "data")
    assert "does not match" in message
    assert "0" * 64 in message
    # Without pools the coverage cannot be computed, nor a question's request built: skipped, not
    # a second problem.
    assert {r.check for r in report.skipped} == {"gate", "request"}
    assert {p.check for p in report.problems} == {"data"}


def test_missing_videos_of_the_pool_are_named(tmp_path: Path, bench: Bench, shared_sim: SimServer) -> None:
    empty = tmp_path / "no-videos"
    empty.mkdir()
    report = _preflight(tmp_path, bench, shared_sim, data={"videos_dir": str(empty)})
    messages = _messages(report, "data")
    # Every pool's videos are checked, each pool named in its own problem.
    assert [m.split(":")[0] for m in messages] == ["pool train", "pool val", "pool test"]
    assert all("video(s)" in m for m in messages)


def test_run_holdout_eval_unset_is_a_preflight_error(
    tmp_path: Path, bench: Bench, shared_sim: SimServer
) -> None:
    report = _preflight(tmp_path, bench, shared_sim, eval={"run_holdout_eval": None})
    [message] = _messages(report, "eval")
    assert "eval.run_holdout_eval" in message


def test_bundle_without_a_trained_skill_is_a_preflight_error(
    tmp_path: Path, bench: Bench, shared_sim: SimServer
) -> None:
    bundle = tmp_path / "bundle"
    shutil.copytree(bench.bundle, bundle)
    (bundle / "skills" / f"{slugify(REACHABLE[0])}.md").unlink()
    report = _preflight(tmp_path, bench, shared_sim, agent={"bundle": str(bundle)})
    [message] = _messages(report, "bundle")
    assert REACHABLE[0] in message


def test_endpoint_down_is_named_and_its_key_never(
    tmp_path: Path, bench: Bench, shared_sim: SimServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PREFLIGHT_TEST_KEY", "sk-very-secret-value")
    dead = {"base_url": f"http://127.0.0.1:{free_port()}/v1", "name": "dead-replica"}
    dead["api_key_env"] = "PREFLIGHT_TEST_KEY"
    report = _preflight(
        tmp_path,
        bench,
        shared_sim,
        llm={"endpoints": [{"base_url": shared_sim.base_url}, dead], "retry": FAST_RETRY},
    )
    [message] = _messages(report, "endpoint")
    assert "dead-replica refuses connections" in message
    assert f"nothing accepts them at {dead['base_url']}/models" in message
    assert "sk-very-secret-value" not in message
    assert {p.check for p in report.problems} == {"endpoint"}


def test_unwritable_store_is_a_preflight_error(tmp_path: Path, bench: Bench, shared_sim: SimServer) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    report = _preflight(tmp_path, bench, shared_sim, store={"url": f"sqlite:///{blocker / 'runs.sqlite'}"})
    [message] = _messages(report, "store")
    assert "not writable" in message
    assert str(blocker) in message


def test_unwritable_cache_is_a_preflight_error(tmp_path: Path, bench: Bench, shared_sim: SimServer) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    report = _preflight(tmp_path, bench, shared_sim, cache={"url": f"sqlite:///{blocker / 'cache.sqlite'}"})
    [message] = _messages(report, "cache")
    assert "not writable" in message


def test_several_problems_are_all_listed(tmp_path: Path, bench: Bench, shared_sim: SimServer) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    report = _preflight(
        tmp_path,
        bench,
        shared_sim,
        train={
            "prompts_dir": str(_prompts_without(tmp_path, "judge.md")),
            "task_types": [*REACHABLE, UNREACHABLE],
        },
        eval={"run_holdout_eval": None},
        llm={"endpoints": [{"base_url": f"http://127.0.0.1:{free_port()}/v1"}], "retry": FAST_RETRY},
        store={"url": f"sqlite:///{blocker / 'runs.sqlite'}"},
    )
    failed = {p.check for p in report.problems}
    assert failed == {"templates", "gate", "eval", "endpoint", "store"}
    assert {r.check for r in report.passed} == {"roles", "data", "bundle", "seed", "cache", "cache salt"}
    assert len({p.message for p in report.problems}) == len(report.problems)


def test_unknown_pool_is_refused(tmp_path: Path, bench: Bench, shared_sim: SimServer) -> None:
    path = write_config(tmp_path, bench, shared_sim.base_url, shared_sim.model_name)
    with pytest.raises(ConfigError, match="pool must be one of"):
        run_preflight(config_of(path), pool="holdout")


def test_unset_data_paths_are_each_a_problem(tmp_path: Path, bench: Bench, shared_sim: SimServer) -> None:
    report = _preflight(tmp_path, bench, shared_sim, data={"questions": None, "pools": None})
    messages = _messages(report, "data")
    assert len(messages) == 2
    assert any("data.questions is not set" in m for m in messages)
    assert any("data.pools is not set" in m for m in messages)


def test_pool_question_missing_from_the_questions_file_is_named(
    tmp_path: Path, bench: Bench, shared_sim: SimServer
) -> None:
    rows = json.loads(bench.questions.read_text())
    pools = json.loads(bench.pools.read_text())
    dropped = pools["pools"]["train"]["question_ids"][0]
    kept = [row for row in rows if row["question_id"] != dropped]
    questions = tmp_path / "questions.json"
    questions.write_text(json.dumps(kept))
    report = _preflight(tmp_path, bench, shared_sim, data={"questions": str(questions)})
    drift, missing = _messages(report, "data")
    assert missing.startswith(f"pools.json names 1 train question(s) not in {questions}")
    assert dropped in missing
    assert drift.startswith(f"{questions} changed since the split was made")


def test_a_questions_file_edited_after_the_split_is_a_preflight_error(
    tmp_path: Path, bench: Bench, shared_sim: SimServer
) -> None:
    rows = json.loads(bench.questions.read_text())
    rows[0]["answer"] = "B" if rows[0]["answer"] != "B" else "C"  # one answer key changed
    questions = tmp_path / "questions.json"
    questions.write_text(json.dumps(rows))
    report = _preflight(tmp_path, bench, shared_sim, data={"questions": str(questions)})
    [message] = _messages(report, "data")
    assert message.startswith(f"{questions} changed since the split was made")
    assert "split verify" in message
    (tmp_path / "same").mkdir()
    assert _messages(_preflight(tmp_path / "same", bench, shared_sim), "data") == []


async def test_preflight_runs_inside_an_event_loop(
    tmp_path: Path, bench: Bench, shared_sim: SimServer
) -> None:
    path = write_config(
        tmp_path, bench, shared_sim.base_url, shared_sim.model_name, eval={"run_holdout_eval": None}
    )
    report = await run_preflight_async(config_of(path), endpoint_timeout_s=3.0)
    assert [p.check for p in report.problems] == ["eval"]


def test_p0_3_class_without_train_questions_is_a_second_problem(
    tmp_path: Path, bench: Bench, shared_sim: SimServer
) -> None:
    # Spatial Perception: 1 val question, none in train (the synthetic micro class).
    report = _preflight(tmp_path, bench, shared_sim, train={"task_types": ["Spatial Perception"]})
    messages = _messages(report, "gate")
    assert len(messages) == 2
    assert any("acceptance is unreachable" in m for m in messages)
    assert any("no train question" in m for m in messages)


def test_p1_1_sampling_draws_with_replacement_and_warns_about_few_questions(
    tmp_path: Path, bench: Bench, shared_sim: SimServer
) -> None:
    for name in ("t0", "t07", "quiet"):
        (tmp_path / name).mkdir()
    # At temperature 0 the 1-question class cannot be accepted: one draw of it is all there is.
    greedy = _preflight(tmp_path / "t0", bench, shared_sim, train={"task_types": [*REACHABLE, UNREACHABLE]})
    assert _messages(greedy, "gate")
    # Sampling, each draw is a fresh sample: the budget is n_max, so the gate can accept...
    sampled = _preflight(
        tmp_path / "t07",
        bench,
        shared_sim,
        agent={"sampling": {"temperature": 0.7}},
        train={"task_types": [*REACHABLE, UNREACHABLE]},
    )
    assert sampled.ok, sampled.problems
    assert "gate" not in {r.check for r in sampled.passed}
    gate = {r.check: r.message for r in sampled.warned}["gate"]
    assert "with replacement" in gate
    # ...but its accepts would be claims about one question: a warning, not a pass.
    assert "micro classes trained because train.task_types names them" in gate
    assert f"{UNREACHABLE}: 1 distinct val question(s) < train.gate.min_distinct=2" in gate
    quiet = _preflight(
        tmp_path / "quiet",
        bench,
        shared_sim,
        agent={"sampling": {"temperature": 0.7}},
        train={"gate": {"min_distinct": 1}},
    )
    assert "micro classes" not in {r.check: r.message for r in quiet.passed}["gate"]
    assert not quiet.warned


def test_7e_evolve_candidates_at_temperature_0_are_warned_about(
    tmp_path: Path, bench: Bench, shared_sim: SimServer
) -> None:
    for name in ("default", "ranked", "trusting", "t0", "seeded", "t07", "one", "trial"):
        (tmp_path / name).mkdir()

    def roles_row(folder: str, **train: object) -> str:
        """The roles row, marked ``WARN:`` when it is a warning rather than a pass."""
        report = _preflight(tmp_path / folder, bench, shared_sim, train=train)
        assert report.ok, report.problems
        rows = {r.check: r for r in report.rows()}
        assert rows["roles"].status in (CheckStatus.PASS, CheckStatus.WARN)
        return ("WARN: " if rows["roles"].status is CheckStatus.WARN else "") + rows["roles"].message

    # The defaults run the rank trial: one proposal until it trusts the rank role, then three.
    default = roles_row("default")
    assert default.startswith("evolve: 3 candidate(s) per target (temperature 0.7) once a rank trial of 24")
    assert default.endswith("one, unranked, if it does not")
    # The evolve role samples by default: three distinct candidates, nothing to warn about.
    declining = {"candidates": 3, "rank": True, "rank_may_decline": True}
    ranked = roles_row("ranked", evolve=declining)
    assert (
        "evolve: 3 candidate(s) per target (temperature 0.7); the rank role picks one or declines" in ranked
    )
    assert not ranked.startswith("WARN")
    # Ranking does not decline unless asked to.
    trusting = roles_row("trusting", evolve={"candidates": 3, "rank": True})
    assert "the rank role picks one;" not in trusting
    assert trusting.endswith("the rank role picks one")
    # At temperature 0 three calls of one prompt would be three copies.
    greedy = roles_row("t0", evolve={"candidates": 3}, roles={"evolve": {"temperature": 0.0}})
    assert "evolve: 1 candidate(s) per target (temperature 0)" in greedy
    assert greedy.startswith("WARN: ")
    assert "temperature 0" in greedy.split("train.evolve.candidates=3")[1]
    seeded = roles_row("seeded", evolve={"candidates": 3}, roles={"evolve": {"temperature": 0.7, "seed": 1}})
    assert seeded.startswith("WARN: ")
    assert "fixed seed" in seeded
    sampled = roles_row(
        "t07", evolve={"candidates": 3, "rank": False}, roles={"evolve": {"temperature": 0.7}}
    )
    unranked = "the first valid one is tested (train.evolve.rank is off)"
    assert sampled == f"evolve: 3 candidate(s) per target (temperature 0.7); {unranked}"
    assert not sampled.startswith("WARN")
    assert not roles_row("one", evolve={"candidates": 1}).startswith("WARN")
    # rank auto: the row says what the trial decides between.
    trial = roles_row("trial", evolve={"candidates": 3, "rank": "auto", "rank_trial_tests": 12})
    assert trial.startswith("evolve: 3 candidate(s) per target (temperature 0.7) once a rank trial of 12")
    assert trial.endswith("one, unranked, if it does not")


def test_classes_left_out_for_few_questions_name_the_setting_that_trains_them(
    tmp_path: Path, bench: Bench, shared_sim: SimServer
) -> None:
    for name in ("none", "some"):
        (tmp_path / name).mkdir()
    # min_distinct 3: the two reachable classes (2 val questions each) are micro, and so is every other.
    none = _preflight(
        tmp_path / "none",
        bench,
        shared_sim,
        agent={"sampling": {"temperature": 0.7}},
        train={"task_types": None, "gate": {**GATE, "min_distinct": 3}},
    )
    (message,) = _messages(none, "gate")
    assert message.startswith("no task type can be trained: every class is micro")
    assert "set train.gate.min_distinct to 1 or name them in train.task_types" in message
    assert "a claim about as few as 1 val questions" in message
    # min_distinct 2: the reachable classes train; the 1-question class is left out, and the row says how
    # to include it and what that risks.
    some = _preflight(
        tmp_path / "some",
        bench,
        shared_sim,
        agent={"sampling": {"temperature": 0.7}},
        train={"task_types": None, "gate": GATE},
    )
    assert some.ok, some.problems
    gate = {r.check: r.message for r in some.rows()}["gate"]
    assert f"micro classes left out: {UNREACHABLE}" in gate
    assert "set train.gate.min_distinct to 1 or name them in train.task_types" in gate
