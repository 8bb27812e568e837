"""The rank trial (``train.evolve.rank: auto``): the run learns on its own tests whether its rank
role tells edits apart, and ranks only if it does (issue 48)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from evolve_support import Env, RecordingModel, ScriptedModel, user_text, with_evolve, with_model
from loop_support import Spending, decisions, loop_config, train_observed, train_once
from report_html import parse_page

from bench_support import Bench
from skillharness.config import load_config
from skillharness.eval.report import build_report
from skillharness.llm.roles import RANK_DECLINE_OFFER, Role
from skillharness.sim import SimServer, decisive_world
from skillharness.store import GateDecisionRow, RunMetric, RunReader
from skillharness.train.config import EvolveConfig
from skillharness.train.evolve.proposer import evolve
from skillharness.train.loop.training import run_folder
from skillharness.train.state.budget import TrainingStopped
from skillharness.train.state.checkpoint import Checkpoint
from skillharness.train.state.rank_trial import (
    TRIAL_DECLINED,
    TRIAL_ENDORSED,
    RankMode,
    RankTrial,
    judge_trial,
    rank_mode,
)
from skillharness.train.state.records import Candidate


def _trial(endorsed: list[float], declined: list[float]) -> RankTrial:
    return RankTrial(endorsed=endorsed, declined=declined)


def test_the_trial_is_judged_once_at_its_size_and_never_flips() -> None:
    better = _trial([0.5, 0.4, 0.6, 0.3, 0.5], [-0.1, 0.0, -0.2, 0.1, 0.0])
    assert judge_trial(better, tests=11, alpha=0.05).verdict == "open"  # ten closed: not yet
    trusted = judge_trial(better, tests=10, alpha=0.05)
    assert trusted.verdict == "trusted"
    assert trusted.p_value is not None
    assert trusted.p_value < 0.05
    # Decided once: more evidence against it is not recorded, and the verdict stands.
    later = trusted.observe(TRIAL_DECLINED, [1, 1, 1]).observe(TRIAL_ENDORSED, [-1, -1])
    assert later == trusted
    assert judge_trial(later, tests=10, alpha=0.05) == trusted


def test_a_rank_role_whose_endorsement_says_nothing_is_distrusted() -> None:
    alike = _trial([0.2, -0.1, 0.0, 0.3, 0.1], [0.1, 0.2, -0.1, 0.0, 0.3])
    judged = judge_trial(alike, tests=10, alpha=0.05)
    assert judged.verdict == "distrusted"
    assert judged.p_value is not None
    assert judged.p_value >= 0.05
    # A rank role that endorses all but one proposal cannot show it tells them apart.
    assert judge_trial(_trial([0.9] * 9, [-0.9]), tests=10, alpha=0.5).verdict == "distrusted"
    # The wrong way round (it endorses the worse ones) is no trust either: the test is one-sided.
    assert judge_trial(_trial([-0.5] * 5, [0.5] * 5), tests=10, alpha=0.05).verdict == "distrusted"


def test_only_closed_tests_of_trial_proposals_with_observations_count() -> None:
    trial = RankTrial()
    assert trial.observe("rank", [1, 1]) == trial  # a ranked or greedy proposal: no evidence
    assert trial.observe(TRIAL_ENDORSED, []) == trial  # refused before its first draw
    observed = trial.observe(TRIAL_ENDORSED, [1, 0, 0, -1, 1]).observe(TRIAL_DECLINED, [-1, 0])
    assert (observed.endorsed, observed.declined, observed.closed) == ([0.2], [-0.5], 2)


@pytest.mark.parametrize(
    ("rank", "verdict", "mode"),
    [
        (False, "open", RankMode.GREEDY),
        (True, "distrusted", RankMode.RANKED),
        ("auto", "open", RankMode.TRIAL),
        ("auto", "trusted", RankMode.RANKED),
        ("auto", "distrusted", RankMode.ALONE),
    ],
)
def test_the_steps_design_follows_the_setting_and_the_verdict(
    rank: bool | str, verdict: str, mode: RankMode
) -> None:
    assert rank_mode(rank, RankTrial(verdict=verdict)) is mode
    assert EvolveConfig(rank=rank).rank == rank  # type: ignore[arg-type]


def _one_rule(env: Env) -> str:
    anchor = [line for line in env.bundle.skill(env.task_type).body.split("\n") if line.strip()][-1]
    edit = {"op": "insert_after", "anchor": anchor, "text": "\n- A trial rule."}
    return json.dumps({"skill_update_mode": "patch", "edits": [edit], "body": None, "rationale": "r"})


@pytest.mark.parametrize(
    ("rank_reply", "choice"),
    [
        ('{"choice": 0, "reason": "worth it"}', TRIAL_ENDORSED),
        ('{"choice": -1, "reason": "generic"}', TRIAL_DECLINED),
        ('{"choice": 2, "reason": "x"}', "rank_fallback"),
        ("not json", "rank_fallback"),
    ],
)
def test_a_trial_proposal_is_tested_whatever_the_rank_role_says(
    env: Env, rank_reply: str, choice: str
) -> None:
    scripts = {Role.EVOLVE: lambda _request: _one_rule(env), Role.RANK: lambda _request: rank_reply}
    model = ScriptedModel(env.ctx.caller.model, scripts)
    ctx = with_evolve(with_model(env.ctx, model), rank="auto")
    assert ctx.config.evolve.candidates == 3  # asked for three when ranking; the trial asks one
    result = env.runner.run(evolve(ctx, env.bundle, env.pack, (), mode=RankMode.TRIAL))
    assert isinstance(result, Candidate), result
    assert result.choice == choice
    assert "A trial rule." in result.document_after
    assert [r.sample_idx for r in model.requests if r.role is Role.EVOLVE] == [0]
    (asked,) = [r for r in model.requests if r.role is Role.RANK]
    assert RANK_DECLINE_OFFER in user_text(asked)


def test_a_distrusted_rank_role_is_not_asked_and_one_proposal_is_tested(env: Env) -> None:
    recorder = RecordingModel(env.ctx.caller.model)
    ctx = with_evolve(with_model(env.ctx, recorder), rank="auto")
    result = env.runner.run(evolve(ctx, env.bundle, env.pack, (), mode=RankMode.ALONE))
    assert isinstance(result, Candidate), result
    assert result.choice == "only"
    assert [r.sample_idx for r in recorder.of_role(Role.EVOLVE)] == [0]
    assert recorder.of_role(Role.RANK) == []


# On this world the rank role endorses one of the first four closed trial proposals (too few to
# show anything: distrusted) and two of the first five, which did better than the three it
# declined (trusted at this loose level): both verdicts on the real loop.
@pytest.mark.parametrize(("tests", "verdict"), [(4, "distrusted"), (5, "trusted")])
async def test_a_run_with_rank_auto_trials_judges_once_and_then_follows_its_verdict(
    train_bench: Bench, experiment: Path, tests: int, verdict: str
) -> None:
    """The real loop: trial proposals are tested and recorded as such, the trial is judged at the
    start of a step once enough of their tests closed, and every step after it uses the verdict's
    design; the run's final metrics say which."""
    evolve_settings = {"candidates": 2, "rank": "auto", "rank_trial_tests": tests, "rank_trial_alpha": 0.5}
    with SimServer(decisive_world(5), questions=train_bench.questions) as sim:
        config_path = loop_config(experiment, train_bench, sim, epochs=3, evolve=evolve_settings)
        observer = Spending()
        outcome = await train_observed(config_path, "t-trial", observer)
    judged = next((c for c in observer.saved if c.rank_trial.verdict != "open"), None)
    assert judged is not None, [c.rank_trial for c in observer.saved][-1]
    assert judged.rank_trial.closed >= tests
    assert judged.rank_trial.verdict == verdict
    assert outcome.checkpoint.rank_trial == judged.rank_trial  # decided once, kept to the end
    with RunReader(load_config(config_path).store) as reader:
        rows = reader.ledger(GateDecisionRow, train_run_id="t-trial")
        final = {m.name: m.value for m in reader.ledger(RunMetric, run_id="t-trial")}["final"]
    at = (judged.epoch, judged.step)
    tested = [r for r in rows if "opened" in r.evidence and not r.evidence.get("merged_with")]
    before = {r.evidence["choice"] for r in tested if tuple(r.evidence["opened"]) < at}
    after = {r.evidence["choice"] for r in tested if tuple(r.evidence["opened"]) > at}
    assert before <= {TRIAL_ENDORSED, TRIAL_DECLINED, "rank_fallback"}
    assert TRIAL_ENDORSED in before
    assert after, "no test was opened after the verdict"
    expected = {"rank", "only", "rank_fallback"} if verdict == "trusted" else {"only"}
    assert after <= expected, (judged.rank_trial, after)
    assert verdict == "distrusted" or "rank" in after
    assert final["rank_design"] == rank_mode("auto", judged.rank_trial).value
    assert final["rank_trial"]["verdict"] == judged.rank_trial.verdict
    # The report says how the run's proposals were chosen, and on what trial.
    files = build_report(load_config(config_path).store.url, "t-trial", experiment / "report.html")
    shown = parse_page(files.html.read_text())["rank-design"]
    assert shown.attrs["data-value"] == final["rank_design"]
    assert f"rank trial: {verdict}" in shown.text


async def test_the_rank_trial_survives_a_budget_stop_and_resume_exactly(
    train_bench: Bench, experiment: Path
) -> None:
    """A run stopped by its budget mid-trial and resumed makes the decisions, and reaches the
    trial's verdict, of the run never stopped."""
    evolve_settings = {"candidates": 2, "rank": "auto", "rank_trial_tests": 4, "rank_trial_alpha": 0.5}
    with SimServer(decisive_world(5), questions=train_bench.questions) as sim:
        whole = loop_config(experiment / "whole", train_bench, sim, evolve=evolve_settings)
        observer = Spending()
        await train_observed(whole, "t-trial-r", observer)
        # Stop where the trial holds some closed tests but no verdict yet.
        inside = next(c for c in observer.saved if c.rank_trial.closed and c.rank_trial.verdict == "open")
        budget = {"max_calls": inside.spent.calls + 1}
        cut = loop_config(experiment / "cut", train_bench, sim, evolve=evolve_settings, budget=budget)
        with pytest.raises(TrainingStopped, match="call budget"):
            await train_observed(cut, "t-trial-r", Spending())
        stopped = Checkpoint.load(run_folder(cut.parent, "t-trial-r"))
        resumed = loop_config(experiment / "cut", train_bench, sim, evolve=evolve_settings)
        outcome = await train_once(resumed, "t-trial-r", resume=True)
    reference = Checkpoint.load(run_folder(whole.parent, "t-trial-r"))
    assert stopped.rank_trial.verdict == "open"  # the stop fell inside the trial
    assert stopped.rank_trial.closed < reference.rank_trial.closed
    assert reference.rank_trial.verdict != "open"
    assert outcome.checkpoint.rank_trial == reference.rank_trial
    assert decisions(resumed, "t-trial-r") == decisions(whole, "t-trial-r")
