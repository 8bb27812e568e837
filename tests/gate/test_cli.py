"""``skillharness gate plan`` and ``gate simulate`` as a user runs them."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli_support import command_app
from skillharness.commands.gate import parse_units, read_manifest_val_counts, register
from skillharness.errors import ConfigError, SplitError
from skillharness.llm import SamplingParams
from skillharness.sim import SimConfig
from skillharness.store import GateObservationRow, RunKind, RunProvenance, RunStore
from skillharness.train.config import GateConfig
from skillharness.train.gate.power import coupled_discordance, independent_discordance, sized_draws

APP = command_app(register)


def _run(*args: str) -> str:
    result = CliRunner().invoke(APP, list(args), env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    return result.output


def _rows(out: str) -> dict[str, list[str]]:
    """Each class's table rows in print order: the gate plan's first, the guard's second (the
    coupling table's rows, keyed by an effect, are left out)."""
    rows: dict[str, list[str]] = {}
    for line in out.splitlines():
        label = line.split("│")[1].strip() if line.count("│") > 3 else ""
        if label and not label.replace(".", "", 1).isdigit():
            rows.setdefault(label, []).append(line)
    return rows


def test_plan_reports_reachability_and_power_per_class() -> None:
    out = _run("gate", "plan", "--units", "Object Reasoning=30,OCR Problems=6", "--runs", "200")
    rows = {label: lines[0] for label, lines in _rows(out).items()}
    assert "NO" in rows["OCR Problems"]
    assert "yes" in rows["Object Reasoning"]
    assert " 8 " in rows["Object Reasoning"]  # minimum wins at alpha 0.05, cap 1/2


def test_item_6_plan_shows_what_the_guard_can_and_cannot_see() -> None:
    """Sampling: every class gets the sized draws; at temperature 0 a small class cannot give them."""
    units = "Object Reasoning=30,OCR Problems=6"
    sampled = _run("gate", "plan", "--units", units, "--runs", "100", "--temperature", "0.7")
    guard = {label: lines[1] for label, lines in _rows(sampled).items()}
    # Holm over 2 classes at 0.05, a 20-point drop at discordance 0.3, power 0.8 plus the 0.05
    # clearing may cost: 68 draws (61 without clearing).
    assert all(" 68 " in row for row in guard.values())
    assert all(" 0.80 " in row and " 20% " in row for row in guard.values())
    assert "flagged with P >= 0.8" in sampled
    assert "136 paired draws" in sampled  # the cost, in the open
    # The power's discordance condition: two classes, each able to give 256 draws, see any.
    assert "P >= 0.80 on a class whose discordance is at most 1.00 and 256 draws" in " ".join(sampled.split())
    assert "guard_clear=0.05" in sampled
    unclear = _run(
        "gate", "plan", "--units", units, "--runs", "100", "--temperature", "0.7", "--guard-clear", "0"
    )
    assert all(" 61 " in row for row in _rows(unclear)["OCR Problems"][1:2])
    assert "clearing" not in unclear
    assert "cannot see" not in sampled
    exact = _run("gate", "plan", "--units", units, "--runs", "100")
    small = _rows(exact)["OCR Problems"][1]
    assert " 6 " in small
    assert " none " in small
    assert "cannot see" in exact
    assert "OCR Problems (0.00)" in exact
    capped = _run(
        "gate", "plan", "--units", units, "--runs", "100", "--temperature", "0.7", "--guard-max-draws", "50"
    )
    assert "capped at guard_max_draws=50" in capped
    assert "cannot see" in capped


def test_plan_reads_val_counts_from_a_split_manifest(tmp_path: Path) -> None:
    manifest = tmp_path / "split_manifest.json"
    counts = {"val": {"Counting Problem": {"short": 20, "long": 12}, "Spatial Reasoning": {"short": 2}}}
    manifest.write_text(json.dumps({"counts": counts}))
    assert read_manifest_val_counts(manifest) == {"Counting Problem": 32, "Spatial Reasoning": 2}
    out = _run("gate", "plan", "--manifest", str(manifest), "--runs", "200", "--effects", "0.2")
    assert "Spatial Reasoning" in out
    assert "NO" in out


def test_simulate_prints_the_four_rates() -> None:
    out = _run("gate", "simulate", "--p-plus", "0.2", "--p-minus", "0.1", "--n-max", "64", "--runs", "500")
    row = next(line for line in out.splitlines() if "e-process ladder" in line)
    cells = [c.strip() for c in row.split("│") if c.strip()]
    accept, harm, inertia, mean_n = (float(c) for c in cells[1:])
    assert accept + harm + inertia == pytest.approx(1.0, abs=1e-3)
    assert 8 <= mean_n <= 64


def test_bad_inputs_are_user_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="Class Name=30"):
        parse_units("Object Reasoning:30", 1)
    broken = tmp_path / "split_manifest.json"
    broken.write_text("{}")
    with pytest.raises(SplitError, match=r"counts\.val"):
        read_manifest_val_counts(broken)
    with pytest.raises(ConfigError, match="not found"):
        read_manifest_val_counts(tmp_path / "absent.json")


@pytest.mark.slow
def test_cli_exits_2_with_one_clear_line_on_a_user_error() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "skillharness.cli", "gate", "simulate", "--p-plus", "0.7", "--p-minus", "0.6"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2
    assert "--p-plus 0.7 + --p-minus 0.6 is above 1" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_plan_lists_a_class_that_has_no_val_question_at_all(tmp_path: Path) -> None:
    # Audit P0-3: the class with 0 val questions is the one most in need of a "NO", not an omission.
    manifest = tmp_path / "split_manifest.json"
    counts = {
        "train": {"Temporal Perception": {"short": 2}, "Counting Problem": {"long": 40}},
        "val": {"Counting Problem": {"long": 30}},
        "test": {"Temporal Perception": {"medium": 5}},
    }
    manifest.write_text(json.dumps({"counts": counts}))
    assert read_manifest_val_counts(manifest) == {"Counting Problem": 30, "Temporal Perception": 0}
    out = _run("gate", "plan", "--manifest", str(manifest), "--runs", "100", "--effects", "0.2")
    rows = {line.split("│")[1].strip(): line for line in out.splitlines() if line.count("│") > 3}
    assert "NO" in rows["Temporal Perception"]


def test_plan_models_both_temperature_modes_and_warns_about_few_questions() -> None:
    args = (
        "gate",
        "plan",
        "--units",
        "Object Reasoning=30,OCR Problems=6",
        "--runs",
        "200",
        "--budget",
        "64",
    )
    greedy = _run(*args, "--effects", "0.2")
    sampled = _run(*args, "--effects", "0.2", "--temperature", "0.7")

    def rows(out: str) -> dict[str, list[str]]:
        return {label: [x.strip() for x in lines[0].split("│")[1:-1]] for label, lines in _rows(out).items()}

    # Temperature 0: 6 questions, 6 observations, never 8 wins. Sampling: 64 fresh draws of the same 6.
    assert rows(greedy)["OCR Problems"][1:4] == ["6 !", "6", "NO"]
    assert rows(sampled)["OCR Problems"][1:4] == ["6 !", "64", "yes"]
    assert rows(greedy)["Object Reasoning"][1:4] == ["30", "30", "yes"]
    assert float(rows(sampled)["OCR Problems"][5]) > 0.2  # a +20-point edit has power once sampled
    for out in (greedy, sampled):
        assert f"fewer than {GateConfig().min_distinct} distinct val questions" in out
        assert "OCR Problems (6)" in out
        assert "Object Reasoning (30)" not in out


def _train_run(
    url: str, run_id: str, sampling: SamplingParams, pairs: list[tuple[int | None, int | None]]
) -> None:
    prov = RunProvenance(
        run_id=run_id,
        kind=RunKind.TRAIN,
        config_hash="c" * 64,
        bundle_hash="b" * 64,
        model="sim-vl",
        endpoints=("http://127.0.0.1:8000/v1",),
        sampling=sampling,
    )

    async def create() -> None:
        async with await store.open_or_resume(prov):
            pass

    with RunStore.open(url) as store:
        asyncio.run(create())
        store.upsert(
            GateObservationRow(
                train_run_id=run_id,
                gate_index=1,
                draw_index=i,
                question_id=f"q{i}",
                task_type="OCR Problems",
                sample_idx=0,
                arm="target",
                candidate=c,
                incumbent=inc,
                wealth=1.0,
                harm_wealth=1.0,
            )
            for i, (c, inc) in enumerate(pairs)
        )


def test_issue_29_plan_measures_discordance_from_a_runs_paired_draws(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    # 6 candidate-only wins, 4 incumbent-only, 28 ties, 2 INFRA (left out): 10 of 38 differ.
    pairs = [(1, 0)] * 6 + [(0, 1)] * 4 + [(1, 1)] * 14 + [(0, 0)] * 14 + [(None, 1), (1, None)]
    _train_run(url, "coupled", SamplingParams(temperature=0.8, seed="per_draw"), pairs)
    _train_run(url, "plain", SamplingParams(temperature=0.8), pairs)
    args = (
        "gate",
        "plan",
        "--units",
        "OCR Problems=40",
        "--runs",
        "100",
        "--temperature",
        "0.8",
        "--store",
        url,
    )
    plain = _run(*args, "--from-run", "plain", "--coupling", "0.5", "--effects", "0.1")
    assert "10 of 38 paired draws differ in correctness (26.3%, independent arms)" in plain
    assert "independent discordance 0.263" in plain
    # A per_draw run measured the coupled discordance: undone by rho at the run's own effect 2/38.
    coupled = _run(*args, "--from-run", "coupled", "--coupling", "0.5", "--effects", "0.1")
    independent = independent_discordance(10 / 38, 0.5, 2 / 38)
    assert f"independent discordance {independent:.3f}" in coupled
    assert independent > 0.45
    row = next(line for line in coupled.splitlines() if line.count("│") > 5 and "0.1" in line.split("│")[1])
    cells = [c.strip() for c in row.split("│")[1:-1]]
    alone, paired = (
        sized_draws(20.0, independent, 0.1),
        sized_draws(20.0, coupled_discordance(independent, 0.5, 0.1), 0.1),
    )
    assert cells == [
        "0.1",
        f"{independent:.2f}",
        str(alone),
        f"{coupled_discordance(independent, 0.5, 0.1):.2f}",
        str(paired),
        f"{1 - paired / alone:.0%}",
    ]
    assert paired < alone
    assert "coupling undone with --coupling rho=0.5" in coupled
    assert "undone" not in plain  # independent arms: nothing to undo
    # Without --coupling the run's coupling is undone with the simulator's rho, and it says so.
    assumed = _run(*args, "--from-run", "coupled", "--effects", "0.1")
    rho = SimConfig().world.seed_coupling
    assert f"coupling undone with the simulator's assumed rho={rho:g}" in assumed
    assert f"independent discordance {independent_discordance(10 / 38, rho, 2 / 38):.3f}" in assumed


def test_issue_37_plan_names_the_simulators_coupling_an_assumption() -> None:
    """The coupling table's rho is the simulator's assumed 0.31 unless --coupling gives the server's."""
    units = ("gate", "plan", "--units", "OCR Problems=40", "--runs", "100", "--temperature", "0.8")
    assumed = _run(*units)
    assert SimConfig().world.seed_coupling == 0.31
    assert "coupling rho=0.31" in assumed
    assert "rho=0.31 is the simulator's assumption (world.seed_coupling)" in assumed
    assert "pass --coupling" in assumed
    given = _run(*units, "--coupling", "0.6")
    assert "coupling rho=0.6" in given
    assert "rho=0.6 as given by --coupling" in given
    assert "simulator's assumption" not in given
    # At temperature 0 no coupling is used, so no assumption is named.
    assert "simulator's assumption" not in _run("gate", "plan", "--units", "OCR Problems=40", "--runs", "100")


def test_issue_29_plan_from_a_run_without_gate_draws_says_so(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    _train_run(url, "empty", SamplingParams(temperature=0.8), [(None, 1)])
    result = CliRunner().invoke(
        APP, ["gate", "plan", "--units", "OCR Problems=40", "--store", url, "--from-run", "empty"]
    )
    assert result.exit_code != 0
    assert "no paired gate draws" in str(result.exception) + result.output


def test_plan_states_the_run_level_guarantee_of_each_level_rule() -> None:
    units = "Object Reasoning=30,OCR Problems=12"
    plain = _run("gate", "plan", "--units", units, "--runs", "100")
    assert "per test: expected false accepts <= sum of alpha over the opened tests" in plain
    elond = _run("gate", "plan", "--units", units, "--runs", "100", "--alpha-spending", "elond")
    assert "run-wide: at most 5% of accepts are false, in expectation (e-LOND)" in elond
    assert "alpha_spending=elond (the run's first test)" in elond
    rows = {label: lines[0] for label, lines in _rows(elond).items()}
    assert " 15 " in rows["Object Reasoning"]  # test 1 of an e-LOND run: alpha 0.05 * gamma_1
    assert "NO" in rows["OCR Problems"]
    assert "test 10: 0.000195 (22 wins)" in elond
    geometric = _run("gate", "plan", "--units", units, "--runs", "100", "--alpha-spending", "geometric")
    assert "run-wide: P(any false accept) <= alpha" in geometric
