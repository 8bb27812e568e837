"""Scored truth: when the endpoint is our simulator, its oracle's exact accuracies for the report.

The simulator says what it is (``GET /health`` answers ``{"simulator": true}``) and serves its
oracle at ``/sim/oracle``. A real server answers neither, and the report then has no truth
columns. The oracle is a property of the simulated world, not a measurement. It is asked for the
**scored truth** of the run's agent path (:func:`agent_path`): the probability that the harness
scores an answer right, counting every way the simulated agent's answer ends unparsed, off-format
or over the step limit, so it is the quantity the measured accuracy estimates. The report names
every number from it "scored truth".
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import httpx

from skillharness.agent import AgentConfig, ProtocolName
from skillharness.eval.holdout_report import TruthCell
from skillharness.skills import Bundle
from skillharness.train import unselected_truth

__all__ = ["SimTruth", "agent_path", "simulator_root", "simulator_truth"]

log = logging.getLogger(__name__)
_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class SimTruth:
    """The oracle's scored accuracies per report group, and its scored gain on the val pool."""

    cells: Mapping[tuple[str, str], TruthCell]  # (grouping, label) -> truth
    val_gain: float | None
    unselected_gain: float | None = None  # the truth of the val gain on questions no gate drew


def agent_path(agent: AgentConfig) -> dict[str, Any]:
    """The oracle's agent path (``sim.AgentPath``'s fields) of a run with ``agent`` settings.

    The scored truth depends on it: the tools offered set how long the simulated agent's plan can
    be against ``max_steps``, and a reference protocol asks one plain request, with the bundle
    only when ``agent.protocol_bundle_slot`` places it (a system message or lmms-eval's
    post_prompt: the simulator reads both). ``get_subtitles`` is offered whenever
    ``agent.subtitles`` is on (a video without subtitle lines answers with none).
    """
    tools = agent.protocol is ProtocolName.SKILLHARNESS
    return {
        "tools": tools,
        "frames": agent.vision,
        "subtitles": agent.subtitles,
        "max_steps": agent.max_steps,
        "bundle_in_prompt": tools or agent.protocol_bundle_slot != "none",
    }


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
    path: Mapping[str, Any] | None,
    unselected: Mapping[str, Any] | None,
) -> SimTruth:
    arms = {"final": _payload(final), "baseline": _payload(baseline)}
    way = {"path": dict(path)} if path is not None else {}
    cells: dict[tuple[str, str], TruthCell] = {}
    for (grouping, label), ids in groups.items():
        if grouping == "task_type":
            continue  # answered by the overall call's per_task_type
        found = {
            arm: await _ask(client, root, {"bundle": b, "question_ids": list(ids), **way})
            for arm, b in arms.items()
        }
        cells[(grouping, label)] = TruthCell(
            final=found["final"]["accuracy"], baseline=found["baseline"]["accuracy"]
        )
        if grouping == "overall":
            for task_type, final_acc in found["final"]["per_task_type"].items():
                cells[("task_type", task_type)] = TruthCell(
                    final=final_acc, baseline=found["baseline"]["per_task_type"][task_type]
                )

    async def gain_on(ids: Sequence[str]) -> float:
        body = {"bundle": arms["baseline"], "after": arms["final"], "question_ids": list(ids), **way}
        return float((await _ask(client, root, body))["delta"])

    val_gain = await gain_on(val_ids) if val_ids else None
    unselected_gain = None
    if unselected is not None:
        gains = {
            tuple(c["undrawn"]): await gain_on(c["undrawn"]) for c in unselected.get("covered", {}).values()
        }
        unselected_gain = unselected_truth(unselected, lambda ids: gains[tuple(ids)])
    return SimTruth(cells, val_gain, unselected_gain)


async def simulator_truth(
    base_url: str,
    final: Bundle,
    baseline: Bundle,
    groups: Mapping[tuple[str, str], Sequence[str]],
    val_ids: Sequence[str] = (),
    path: Mapping[str, Any] | None = None,
    unselected: Mapping[str, Any] | None = None,
) -> SimTruth | None:
    """The scored truth of both bundles on every group, or None when not a simulator.

    ``groups`` maps ``(grouping, label)`` to the group's test question ids; it must hold the
    ``("overall", ...)`` group (task-type truth comes with it). ``path`` is the run's
    :func:`agent_path` (None: the oracle's default, the tool-using agent with every tool and six
    turns). ``unselected``: the training run's estimate on val questions no gate drew, whose truth
    is then asked too (``SimTruth.unselected_gain``). A simulator whose oracle fails (say, it was
    started with other questions) gives no truth and a warning, never a failed eval.
    """
    root = simulator_root(base_url)
    async with httpx.AsyncClient(timeout=_TIMEOUT_S) as client:
        if not await _is_simulator(client, root):
            return None
        try:
            return await _truth(client, root, final, baseline, groups, val_ids, path, unselected)
        except (httpx.HTTPError, ValueError, KeyError, TypeError) as exc:
            log.warning("the simulator's oracle at %s gave no truth: %s", root, exc)
            return None
