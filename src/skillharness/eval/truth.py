"""Simulator truth: when the endpoint is our simulator, its oracle's exact accuracies for the report.

The simulator says what it is (``GET /health`` answers ``{"simulator": true}``) and serves its
oracle at ``/sim/oracle``. A real server answers neither, and the report then has no truth
columns. The oracle is a property of the simulated world, not a measurement: the report marks
every number from it as "simulator truth".
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import httpx

from skillharness.eval.holdout_report import TruthCell
from skillharness.skills import Bundle

__all__ = ["SimTruth", "simulator_root", "simulator_truth"]

log = logging.getLogger(__name__)
_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class SimTruth:
    """The oracle's accuracies per report group, and its gain on the val pool."""

    cells: Mapping[tuple[str, str], TruthCell]  # (grouping, label) -> truth
    val_gain: float | None


def simulator_root(base_url: str) -> str:
    """The server root of an OpenAI base URL (``http://h:p/v1`` -> ``http://h:p``)."""
    root = base_url.rstrip("/")
    return root[: -len("/v1")] if root.endswith("/v1") else root


def _payload(bundle: Bundle) -> dict[str, Any]:
    # The oracle's own reading of a bundle (rendered skill documents, every tool description).
    from skillharness.sim import BundleText  # the simulator is only imported when it is the endpoint

    return BundleText.from_bundle(bundle).model_dump(mode="json")


async def _is_simulator(client: httpx.AsyncClient, root: str) -> bool:
    try:
        response = await client.get(f"{root}/health")
        return response.status_code == 200 and response.json().get("simulator") is True
    except (httpx.HTTPError, ValueError, AttributeError):
        return False


async def _ask(client: httpx.AsyncClient, root: str, body: dict[str, Any]) -> dict[str, Any]:
    response = await client.post(f"{root}/sim/oracle", json=body)
    response.raise_for_status()
    answer: dict[str, Any] = response.json()
    return answer


async def _truth(
    client: httpx.AsyncClient,
    root: str,
    final: Bundle,
    baseline: Bundle,
    groups: Mapping[tuple[str, str], Sequence[str]],
    val_ids: Sequence[str],
) -> SimTruth:
    arms = {"final": _payload(final), "baseline": _payload(baseline)}
    cells: dict[tuple[str, str], TruthCell] = {}
    for (grouping, label), ids in groups.items():
        if grouping == "task_type":
            continue  # answered by the overall call's per_task_type
        found = {
            arm: await _ask(client, root, {"bundle": b, "question_ids": list(ids)}) for arm, b in arms.items()
        }
        cells[(grouping, label)] = TruthCell(
            final=found["final"]["accuracy"], baseline=found["baseline"]["accuracy"]
        )
        if grouping == "overall":
            for task_type, final_acc in found["final"]["per_task_type"].items():
                cells[("task_type", task_type)] = TruthCell(
                    final=final_acc, baseline=found["baseline"]["per_task_type"][task_type]
                )
    val_gain = None
    if val_ids:
        effect = await _ask(
            client, root, {"bundle": arms["baseline"], "after": arms["final"], "question_ids": list(val_ids)}
        )
        val_gain = float(effect["delta"])
    return SimTruth(cells, val_gain)


async def simulator_truth(
    base_url: str,
    final: Bundle,
    baseline: Bundle,
    groups: Mapping[tuple[str, str], Sequence[str]],
    val_ids: Sequence[str] = (),
) -> SimTruth | None:
    """The oracle's accuracies of both bundles on every group, or None when not a simulator.

    ``groups`` maps ``(grouping, label)`` to the group's test question ids; it must hold the
    ``("overall", ...)`` group (task-type truth comes with it). A simulator whose oracle fails
    (say, it was started with other questions) gives no truth and a warning, never a failed eval.
    """
    root = simulator_root(base_url)
    async with httpx.AsyncClient(timeout=_TIMEOUT_S) as client:
        if not await _is_simulator(client, root):
            return None
        try:
            return await _truth(client, root, final, baseline, groups, val_ids)
        except (httpx.HTTPError, ValueError, KeyError, TypeError) as exc:
            log.warning("the simulator's oracle at %s gave no truth: %s", root, exc)
            return None
