"""Helpers of the validation tests: an experiment for gates, candidates built from text, ledger reads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from train_support import write_train_config

from bench_support import Bench
from skillharness.sim import SimServer
from skillharness.skills import Bundle, EditLimits, EditSet, EditTarget
from skillharness.store import GateObservationRow, RunStore
from skillharness.train.state.records import Candidate


def gate_experiment(
    folder: Path,
    bench: Bench,
    sim: SimServer,
    *,
    temperature: float,
    gate: dict[str, Any],
    task_types: list[str] | None = None,
    store: Path | None = None,
    cache: dict[str, Any] | None = None,
    infra_retries: int = 2,
) -> Path:
    """A training config for gate tests: one attempt per model call (a 503 becomes an INFRA outcome)."""
    # min_distinct 1: the bench's 8-11 val questions per class are what these gates test on; with
    # train.task_types unset every class then trains (none is micro for its size alone).
    train: dict[str, Any] = {"seed": 0, "gate": {"min_distinct": 1, **gate}, "infra_retries": infra_retries}
    if task_types is not None:
        train["task_types"] = task_types
    sections: dict[str, dict[str, Any]] = {
        "agent": {"sampling": {"temperature": temperature}},
        "llm": {
            "retry": {"max_attempts": 1},
            "breaker": {"failure_threshold": 100_000},
        },
        "train": train,
    }
    if store is not None:
        sections["store"] = {"url": f"sqlite:///{store}"}
    if cache is not None:
        sections["cache"] = cache
    return write_train_config(folder, bench, sim, **sections)


def document(bundle: Bundle, target: EditTarget) -> str:
    if target.kind == "skill":
        return bundle.skill(target.name or "").body
    if target.kind == "system":
        return bundle.system_prompt
    return bundle.tools[target.name or ""]


def rewrite(
    bundle: Bundle, target: EditTarget, body: str, evidence: frozenset[str] = frozenset()
) -> Candidate:
    """A candidate whose target document is ``body`` (an applied rewrite edit set)."""
    before = document(bundle, target)
    edit_set = EditSet(skill_update_mode="rewrite", edits=(), body=body, rationale="test edit")
    after = bundle.apply(target, edit_set, EditLimits(max_body_chars=100_000))
    if not isinstance(after, Bundle):
        raise AssertionError(f"the test edit was refused: {after}")
    return Candidate(target, edit_set, after, before, document(after, target), "only", evidence)


def with_lines(
    bundle: Bundle, target: EditTarget, lines: list[str], evidence: frozenset[str] = frozenset()
) -> Candidate:
    """A candidate whose target document gains ``lines`` at its end."""
    body = document(bundle, target).rstrip("\n") + "\n" + "\n".join(lines) + "\n"
    return rewrite(bundle, target, body, evidence)


def observations(
    store: RunStore, run_id: str, gate_index: int, arm: str = "target"
) -> list[GateObservationRow]:
    rows = store.select(GateObservationRow, train_run_id=run_id, gate_index=gate_index)
    return [r for r in rows if r.arm == arm]


def agent_requests(sim: SimServer) -> int:
    return int(sim.stats()["roles"].get("agent", 0))
