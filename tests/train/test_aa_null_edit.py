"""The A/A machinery of benchmarks/aa_check.py against the simulator: null edits through the loop's gate.

The gates run through ``open_candidate`` and ``evidence_round``, as in a training step. A null
edit whose requests are byte for byte the incumbent's gives each draw one request and ties on
every draw (one seed per draw, or the response cache): it can never be accepted. A whitespace edit
changes the request the model is sent; a re-stated document is refused before any draw.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from train_support import train_context
from validate_support import agent_requests, gate_experiment

from bench_support import Bench
from skillharness.sim import SimConfig, SimServer
from skillharness.skills import Bundle, Workspace

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from aa_gates import GateResult, NullKind, gate_null_edits, log_requests, null_candidate

pytestmark = pytest.mark.sim_world(SimConfig(seed=3), questions="bench")


async def _gates(
    folder: Path,
    bench: Bench,
    sim: SimServer,
    kind: NullKind,
    gates: int,
    *,
    seed: str | None = "per_draw",
    share: bool = False,
    **sections: Any,
) -> tuple[list[GateResult], dict[str, set[str]], dict[str, float]]:
    """``gates`` null edits of ``kind``; their results, each draw's first requests and the agent's usage
    (``seed``: per_draw, one seed per draw for both arms; None, independent arms). ``share``: the
    gates share the incumbent's samples (the default design); off, as the A/A check runs them,
    each gate is an independent replicate on fresh samples."""
    gate = {"n_max": 32, "share_incumbent": share}
    path = gate_experiment(folder, bench, sim, temperature=0.7, gate=gate, **sections)
    doc = yaml.safe_load(path.read_text())
    doc["agent"]["sampling"]["seed"] = seed
    path.write_text(yaml.safe_dump(doc))
    async with train_context(path, run_id=f"aa-{kind}") as ctx:
        bundle = Bundle.load(bench.bundle)
        ws = Workspace.create(folder / "workspace", bundle, reason="initial bundle")
        log = log_requests(ctx)
        # The class with the most val questions: its gates draw from them with replacement.
        task_type = max(sorted(ctx.val_by_type), key=lambda t: len(ctx.val_by_type[t]))
        results = await gate_null_edits(ctx, ws, task_type, kind, gates, val_scores=False)
        return results, log.first_requests, ctx.session.usage().get("agent", {})


async def test_byte_identical_arms_tie_on_every_draw_and_never_accept(
    tmp_path: Path, bench: Bench, sim: SimServer
) -> None:
    """One seed per draw and the cache off: each draw's two arms send one request and tie."""
    results, requests, _ = await _gates(tmp_path, bench, sim, "same_request", 3, cache={"enabled": False})
    assert [r.status for r in results] == ["opened"] * 3
    assert all(r.reason != "accept" for r in results)
    for r in results:
        assert r.observations >= 8  # the first stage was drawn and observed
        assert (r.wins, r.losses, r.ties) == (0, 0, r.observations)
    assert len(requests) == sum(r.draws for r in results)  # fresh samples: no draw asked twice
    assert {len(keys) for keys in requests.values()} == {1}


async def test_the_cache_serves_a_byte_identical_candidate_the_incumbents_answer(
    tmp_path: Path, bench: Bench, sim: SimServer
) -> None:
    """Independent arms (no seed) with the response cache on, as a user's run has it: the candidate's
    request is the incumbent's key, so it is answered by the incumbent's call and ties."""
    results, requests, usage = await _gates(tmp_path, bench, sim, "same_request", 2, seed=None)
    draws = sum(r.draws for r in results)
    assert all((r.wins, r.losses) == (0, 0) and r.reason != "accept" for r in results)
    # Every call of the candidate's episodes (one or more turns each) was the incumbent's, answered once.
    assert usage["cache_hits"] >= draws
    assert 2 * usage["cache_hits"] == usage["calls"]
    assert {len(keys) for keys in requests.values()} == {1}


async def test_a_whitespace_edit_changes_the_request_and_a_restated_one_is_refused(
    tmp_path: Path, bench: Bench, sim: SimServer
) -> None:
    incumbent = Bundle.load(bench.bundle)
    spaced = null_candidate(incumbent, "Object Reasoning", "whitespace")
    assert spaced.document_after.replace("\n", "") == spaced.document_before.replace("\n", "")
    assert spaced.bundle.bundle_hash != incumbent.bundle_hash
    results, requests, _ = await _gates(tmp_path / "spaced", bench, sim, "whitespace", 2)
    assert all(r.status == "opened" and r.observations >= 8 for r in results)
    assert {len(keys) for keys in requests.values()} == {2}  # each draw: the arms' two requests
    before = agent_requests(sim)
    (same,), asked, _ = await _gates(tmp_path / "same", bench, sim, "same_text", 1)
    assert (same.status, same.reason, same.draws) == ("invalid", "reject_invalid", 0)
    assert asked == {}
    assert agent_requests(sim) == before
