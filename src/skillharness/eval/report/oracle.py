"""Scored truth for the report: the oracle's exact accuracy beside the measured numbers.

Optional. It asks a running simulator's ``/sim/oracle`` route over HTTP (the eval layer does not
import the simulator), giving it the bundle texts read from the run's workspace folder and the
run's agent path (:func:`skillharness.eval.truth.agent_path`), so each value is the probability
that the harness scores an answer right on that path: what the measured number estimates. Only a
simulator has such a route; against a real model there is no truth to show.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import httpx

from skillharness.data import Pool
from skillharness.errors import ConfigError, SkillharnessError
from skillharness.eval.report.model import GateView, Headline, LineTruth, ReportData
from skillharness.skills import Bundle, EditTarget, Workspace, inserted_lines, with_line
from skillharness.store import DiagnosisRow, PredictionStatus, RunReader
from skillharness.train import describe_unselected, unselected_truth

__all__ = ["OracleClient", "add_simulator_truth", "bundle_texts"]


def bundle_texts(bundle: Bundle) -> dict[str, Any]:
    """The oracle's ``BundleText`` object of a bundle (skills rendered, keyed by slug)."""
    return {
        "system_prompt": bundle.system_prompt,
        "skills": {slug: doc.render() for slug, doc in bundle.skills.items()},
        "tool_descriptions": dict(bundle.tools),
    }


def _with_target(texts: dict[str, Any], target: str, document: str) -> dict[str, Any]:
    """``texts`` with ``target``'s document replaced (``skill:slug``, ``system``, ``tools:name``)."""
    kind, _, name = target.partition(":")
    changed = {k: dict(v) if isinstance(v, dict) else v for k, v in texts.items()}
    if kind == "skill":
        changed["skills"][name] = document
    elif kind == "system":
        changed["system_prompt"] = document
    elif kind == "tools":
        changed["tool_descriptions"][name] = document
    return changed


class OracleClient:
    """A small client of ``/sim/oracle``; errors become ConfigError naming the URL."""

    def __init__(self, url: str, *, timeout: float = 30.0, path: Mapping[str, Any] | None = None) -> None:
        base = url.rstrip("/").removesuffix("/v1")  # the chat base URL is accepted too
        self.url = base if base.endswith("/sim/oracle") else f"{base}/sim/oracle"
        # Every question is asked about the run's agent path: the scored truth depends on it.
        self.path = dict(path) if path is not None else None
        self._client = httpx.Client(timeout=timeout)

    def close(self) -> None:
        self._client.close()

    def ask(self, payload: dict[str, Any]) -> dict[str, Any]:
        if self.path is not None:
            payload = {**payload, "path": self.path}
        try:
            response = self._client.post(self.url, json=payload)
            response.raise_for_status()
            answer = response.json()
        except (httpx.HTTPError, ValueError) as exc:
            raise ConfigError(f"the simulator oracle at {self.url} did not answer: {exc}") from exc
        if not isinstance(answer, dict) or not answer.get("simulator"):
            raise ConfigError(f"{self.url} is not a simulator oracle (no 'simulator': true in its answer)")
        return answer

    def accuracy(self, texts: dict[str, Any], question_ids: list[str]) -> float:
        return float(self.ask({"bundle": texts, "question_ids": question_ids})["accuracy"])


def _pool_ids(reader: RunReader, run_id: str | None) -> dict[str, str]:
    """question id -> task type of a stored run's answered questions."""
    if run_id is None:
        return {}
    return {
        p.question_id: p.task_type
        for p in reader.predictions(run_id)
        if p.status is not PredictionStatus.INFRA_ERROR
    }


def _final_version(data: ReportData) -> str | None:
    if data.final and data.final.get("version"):
        return str(data.final["version"])
    if data.curves:
        return data.curves[-1].version
    return None


def _gate_delta(
    oracle: OracleClient, texts: dict[str, Any], gate: GateView, ids: dict[str, str]
) -> float | None:
    """The true effect on val of the gate's edit (on its class for a skill, on all val otherwise)."""
    if gate.document_after is None:
        return None
    target = EditTarget.parse(gate.target)
    chosen = sorted(q for q, t in ids.items() if target.reaches(t))
    if not chosen:
        return None
    after = _with_target(texts, gate.target, gate.document_after)
    return float(oracle.ask({"bundle": texts, "after": after, "question_ids": chosen})["delta"])


def _line_truths(
    oracle: OracleClient, texts: dict[str, Any], gate: GateView, ids: dict[str, str]
) -> list[LineTruth] | None:
    """Each line an accepted gate's edit inserted, scored alone against the document it came into."""
    if not gate.accepted or gate.document_after is None:
        return None
    out = []
    for line in inserted_lines(gate.document_before, gate.document_after):
        alone = gate.model_copy(update={"document_after": with_line(gate.document_before, line)})
        delta = _gate_delta(oracle, texts, alone, ids)
        if delta is not None:
            out.append(LineTruth(line=line, delta=delta))
    return out


_JUDGED = ("defect", "lapse", "uncertain")


def _judge_truth(
    oracle: OracleClient, reader: RunReader, data: ReportData, texts_of: Any, versions: dict[str, str]
) -> dict[str, float | None] | None:
    """The judge's ``defect`` against the truth: a case is a true defect when its skill lacks an
    insight its question needs (asked of the oracle with the rollout's own bundle text)."""
    counts = {"true_positive": 0, "false_positive": 0, "false_negative": 0, "true_negative": 0}
    for child in data.children:
        version = versions.get(reader.run(child.run_id).provenance.bundle_hash)
        rows = [r for r in reader.ledger(DiagnosisRow, run_id=child.run_id) if r.cause in _JUDGED]
        if version is None or not rows:
            continue
        answer = oracle.ask(
            {
                "bundle": texts_of(version),
                "question_ids": sorted({r.question_id for r in rows}),
                "missing": True,
            }
        )
        missing = answer.get("missing") or {}
        for row in rows:
            said, truly = row.cause == "defect", bool(missing.get(row.question_id))
            key = ("true_" if said == truly else "false_") + ("positive" if said else "negative")
            counts[key] += 1
    n = sum(counts.values())
    if not n:
        return None
    said = counts["true_positive"] + counts["false_positive"]
    real = counts["true_positive"] + counts["false_negative"]
    return {
        **{k: float(v) for k, v in counts.items()},
        "n": float(n),
        "precision": counts["true_positive"] / said if said else None,
        "recall": counts["true_positive"] / real if real else None,
    }


def _headline_truth(
    oracle: OracleClient,
    h: Headline,
    pools: Mapping[Pool, Mapping[str, str]],
    texts_of: Callable[[str], dict[str, Any]],
    final_version: str | None,
) -> Headline:
    """``h`` with the scored truth of each arm and, on val, of the gain on questions no gate drew."""
    ids = sorted(pools.get(h.pool, {}))
    updates: dict[str, Any] = {}
    for arm, version in (("baseline", "v0000"), ("final", final_version)):
        score = getattr(h, arm)
        if score is not None and version is not None and ids:
            updates[arm] = score.model_copy(update={"sim_truth": oracle.accuracy(texts_of(version), ids)})
    if h.unselected and final_version is not None:
        final_texts, base_texts = texts_of(final_version), texts_of("v0000")
        truth = unselected_truth(
            h.unselected, lambda q: oracle.accuracy(final_texts, q) - oracle.accuracy(base_texts, q)
        )
        updates["unselected_note"] = describe_unselected(h.unselected, truth)
    return h.model_copy(update=updates) if updates else h


def add_simulator_truth(
    data: ReportData,
    reader: RunReader,
    workspace: Path,
    oracle_url: str,
    path: Mapping[str, Any] | None = None,
) -> ReportData:
    """``data`` with the scored truth beside each headline score and each gate's true effect.

    ``path``: the run's agent path (``agent_path(settings.agent)``); None is the oracle's default,
    the tool-using agent with every tool and six turns.
    """
    if not workspace.is_dir():
        raise ConfigError(f"simulator truth needs the run's workspace folder; {workspace} does not exist")
    baseline_run = (data.final or {}).get("baseline_run") or f"{data.run.run_id}.baseline"
    test_run = next((c.run_id for c in data.children if c.pool == Pool.TEST), None)
    pools = {Pool.VAL: _pool_ids(reader, baseline_run), Pool.TEST: _pool_ids(reader, test_run)}
    texts: dict[str, dict[str, Any]] = {}

    def texts_of(version: str) -> dict[str, Any]:
        if version not in texts:
            try:
                texts[version] = bundle_texts(Bundle.load(workspace / version))
            except SkillharnessError as exc:
                raise ConfigError(f"cannot read version {version} in {workspace}: {exc}") from exc
        return texts[version]

    oracle = OracleClient(oracle_url, path=path)
    try:
        final_version = _final_version(data)
        headlines = [_headline_truth(oracle, h, pools, texts_of, final_version) for h in data.headlines]
        gates = [
            g.model_copy(
                update={
                    "sim_delta": _gate_delta(oracle, texts_of(g.version_before), g, pools[Pool.VAL]),
                    "sim_lines": _line_truths(oracle, texts_of(g.version_before), g, pools[Pool.VAL]),
                }
            )
            for g in data.gates
        ]
        versions = {v.bundle_hash: v.version for v in Workspace.read(workspace, verify=False).history()}
        judge = _judge_truth(oracle, reader, data, texts_of, versions)
    finally:
        oracle.close()
    update = {"headlines": headlines, "gates": gates, "simulator_truth": True, "judge_truth": judge}
    return data.model_copy(update=update)
