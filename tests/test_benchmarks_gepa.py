"""The GEPA peer (benchmarks/peer_gepa.py): one run on the bundled synthetic benchmark at a tiny
budget, and what it is read as at each mark.

The peer's figures stand beside our loop's only if its readings obey the same rules: never a call
past the mark, the pool as it stood at the mark, the truth of the candidate GEPA would return, and
every model call counted. These check that on a real run (a few seconds), and the reading's rule
on a pool written by hand.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip(
    "gepa", reason="the GEPA peer needs the gepa extra (pip install -e '.[gepa]'; make test installs it)"
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import peer_gepa
from simlab.efficiency import Job, prepare
from simlab.gepa_adapter import bundle_of, candidate_of
from simlab.gepa_run import SYNTH_SETUP, candidate_at, read_pool, run_gepa_job
from simlab.world import Truth, sim_world, synth_source
from skillharness.sim import SimServer
from skillharness.skills import Bundle

BUDGET = 300
MARKS = (60, 150, BUDGET)


@pytest.fixture(scope="module")
def gepa_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Truth, Bundle]:
    """One GEPA run (seed 0, 300 calls), and the truth of its world rebuilt apart from it."""
    folder = tmp_path_factory.mktemp("gepa")
    job = Job("synth-q", 0, BUDGET, MARKS, "realistic", synth_source(folder, folder), folder / "run", 5.0)
    record = run_gepa_job(job, SYNTH_SETUP)
    assert "error" not in record, record.get("error")
    data = prepare(dataclasses.replace(job, folder=folder / "truth"), SYNTH_SETUP)
    with SimServer(sim_world("realistic", 0), questions=data.source.questions) as sim:
        truth = Truth(sim.oracle, data)
    return record, truth, Bundle.load(data.bundle)


@pytest.mark.slow
def test_the_run_stops_on_its_budget_and_counts_every_model_call(
    gepa_run: tuple[dict[str, Any], Truth, Bundle],
) -> None:
    record, _, _ = gepa_run
    assert record["end_reason"] == "max_calls"
    assert record["spent"] >= BUDGET
    assert record["overshoot"] == record["spent"] - BUDGET
    # Every call was an agent turn or a proposal, and the budget saw each (no cache hit here).
    usage = record["usage"]
    assert sum(u["calls"] - u["cache_hits"] for u in usage.values()) == record["spent"]
    assert sum(record["calls_by_phase"].values()) == record["spent"]
    assert usage["evolve"]["calls"] >= record["proposals"]["proposed"] > 0


@pytest.mark.slow
def test_a_reading_never_rests_on_a_call_past_its_mark(
    gepa_run: tuple[dict[str, Any], Truth, Bundle],
) -> None:
    record, _, _ = gepa_run
    pool = record["pool"]
    for mark in MARKS:
        reading = record["readings"][str(mark)]
        held = [e for e in pool if e["calls"] <= mark]
        assert reading["calls"] <= mark
        assert reading["calls"] == (held[-1]["calls"] if held else 0)
        assert pool[reading["returned"]]["calls"] <= mark or not held
        assert reading["accepted"] == max(len(held) - 1, 0)
    # The pool as it stood: a later mark holds at least as much, and the last holds the run's end.
    accepted = [record["readings"][str(m)]["accepted"] for m in MARKS]
    assert accepted == sorted(accepted)
    assert record["readings"][str(BUDGET)]["accepted"] == sum(e["calls"] <= BUDGET for e in pool) - 1


@pytest.mark.slow
def test_the_closure_read_is_the_truth_of_the_candidate_gepa_returns(
    gepa_run: tuple[dict[str, Any], Truth, Bundle],
) -> None:
    record, truth, initial = gepa_run
    pool = record["pool"]
    for mark in MARKS:
        reading = record["readings"][str(mark)]
        returned = candidate_at(pool, reading["returned"], candidate_of(initial))
        bundle = bundle_of(returned, initial.tools)
        assert reading["closure_test"] == pytest.approx(truth.closure(bundle, "test"), abs=1e-12)
        best = candidate_at(pool, reading["best_in_pool"], candidate_of(initial))
        assert reading["best_closure_test"] == pytest.approx(
            truth.closure(bundle_of(best, initial.tools), "test"), abs=1e-12
        )
        assert reading["best_closure_test"] >= reading["closure_test"]


@pytest.mark.slow
def test_the_tables_render_from_the_stored_record(gepa_run: tuple[dict[str, Any], Truth, Bundle]) -> None:
    record, _, _ = gepa_run
    doc = {"command": "x", "commit": "abcdef0", "gepa": "0.1.4", "sim_fingerprint": "f", "elapsed_s": 1.0}
    text = peer_gepa.render({**doc, "marks": list(MARKS), "runs": [record]})
    assert "| synth-q | 300 | 1 |" in text
    assert f"{record['spent']:,} (+{record['overshoot']})" in text


def _entry(
    index: int, calls: int, val: float, closure: float, effect: float, lines: list[float]
) -> dict[str, Any]:
    return {
        "index": index,
        "parent": None if index == 0 else 0,
        "calls": calls,
        "val_score": val,
        "closure_test": closure,
        "closure_val": closure,
        "effect_test": effect,
        "lines": [{"effect_test": e} for e in lines],
        "texts": {},
    }


# The seed at 100 calls; a lucky child best on val (truly worse) at 400; a truly better one at 900
# that ties it on val; a child best on val at 1,200, past a mark of 1,000.
POOL = [
    _entry(0, 100, 0.50, 0.0, 0.0, []),
    _entry(1, 400, 0.60, -0.05, -0.01, [-0.01, 0.0]),
    _entry(2, 900, 0.60, 0.20, 0.02, [0.02]),
    _entry(3, 1_200, 0.90, 0.30, 0.03, [0.03]),
]


def test_gepa_returns_the_best_on_val_of_the_pool_it_held_at_the_mark() -> None:
    # A tie on val goes to the earlier candidate, as GEPAResult.best_idx breaks it.
    at = read_pool(POOL, 1_000)
    assert (at.returned, at.closure_test, at.calls) == (1, -0.05, 900)
    assert (at.best_in_pool, at.best_closure_test) == (2, 0.20)
    assert (at.accepted, at.harmful, at.lines, at.harmful_lines) == (2, 1, 3, 2)
    assert read_pool(POOL, 1_200).returned == 3
    assert (read_pool(POOL, 399).returned, read_pool(POOL, 399).accepted) == (0, 0)
    # Before the seed's val evaluation ends, GEPA holds the initial bundle: nothing closed.
    early = read_pool(POOL, 99)
    assert (early.calls, early.closure_test, early.accepted) == (0, 0.0, 0)
