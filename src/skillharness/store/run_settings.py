"""A run's classified settings, kept beside its provenance so a refused resume can say what changed.

The provenance holds only the settings' hash (``config_hash``). The settings themselves (dotted key
→ value, see ``skillharness.settings``) are stored as the run's ``settings`` metric when the run is
created; a resume whose hash differs names each setting that differs, with both values.

Replicas are interchangeable: the model name, the sampling settings and the request shape decide
answers, not which replica served a request. So the endpoint list is no part of what a resume must
match: a replica's URL is no setting, per-replica settings count as the set of their values
(:func:`replica_neutral`), and a resume with other replicas is accepted and recorded as the run's
``replica_changes`` metric (each change with its time, the replicas before and after).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from sqlalchemy import Connection, select

from skillharness.errors import RunInputsChanged
from skillharness.store.ledger import RunMetric
from skillharness.store.records import RunProvenance
from skillharness.store.rows import now_iso
from skillharness.store.schema import run_metrics
from skillharness.store.upsert import upsert_statement

__all__ = [
    "REPLICA_CHANGES_METRIC",
    "SETTINGS_METRIC",
    "check_same_run",
    "read_replica_changes",
    "read_settings",
    "record_replica_change",
    "replica_neutral",
    "settings_changes",
    "write_settings",
]

SETTINGS_METRIC = "settings"
REPLICA_CHANGES_METRIC = "replica_changes"
# A setting of one replica, as flattened by skillharness.settings: llm.endpoints.<index>.<leaf>.
_REPLICA_SETTING = re.compile(r"^llm\.endpoints\.(\d+)\.(.+)$")
_REPLICA_FREE = frozenset({"base_url"})  # runs created before replicas were interchangeable stored it
_ABSENT = object()
_SHOWN_CHARS = 120


def write_settings(conn: Connection, run_id: str, settings: Mapping[str, Any]) -> None:
    """Store ``settings`` as the run's ``settings`` metric (in the caller's transaction)."""
    row = RunMetric(run_id=run_id, name=SETTINGS_METRIC, value=dict(settings)).row(now_iso())
    conn.execute(upsert_statement(conn.dialect.name, run_metrics, tuple(row)), [row])


def replica_neutral(settings: Mapping[str, Any]) -> dict[str, Any]:
    """``settings`` with each per-replica setting replaced by the sorted set of its values.

    ``llm.endpoints.0.send_sample_idx`` and ``llm.endpoints.1.send_sample_idx`` become one
    ``llm.endpoints.*.send_sample_idx`` (a list of the distinct values), so adding or removing a
    replica like the others changes nothing; a replica's URL is dropped.
    """
    neutral: dict[str, Any] = {}
    per_replica: dict[str, set[str]] = {}
    for key, value in settings.items():
        match = _REPLICA_SETTING.match(key)
        if match is None:
            neutral[key] = value
        elif match.group(2) not in _REPLICA_FREE:
            per_replica.setdefault(match.group(2), set()).add(json.dumps(value, sort_keys=True))
    for leaf, values in sorted(per_replica.items()):
        neutral[f"llm.endpoints.*.{leaf}"] = [json.loads(v) for v in sorted(values)]
    return neutral


def read_replica_changes(conn: Connection, run_id: str) -> list[dict[str, Any]]:
    """The run's recorded replica changes, oldest first (empty when its replicas never changed)."""
    query = select(run_metrics.c.value).where(
        run_metrics.c.run_id == run_id, run_metrics.c.name == REPLICA_CHANGES_METRIC
    )
    value = conn.execute(query).scalar_one_or_none()
    changes = json.loads(value) if value is not None else []
    return changes if isinstance(changes, list) else []


def record_replica_change(
    conn: Connection, run_id: str, first: tuple[str, ...], now: tuple[str, ...]
) -> dict[str, Any] | None:
    """Append a change to the run's ``replica_changes`` when ``now`` differs from its latest replicas.

    ``first`` is the provenance's endpoints (the replicas the run started with). Returns the change.
    """
    changes = read_replica_changes(conn, run_id)
    before = list(changes[-1]["now"]) if changes else list(first)
    if sorted(before) == sorted(now):
        return None
    change = {
        "at": now_iso(),
        "before": before,
        "now": list(now),
        "added": sorted(set(now) - set(before)),
        "removed": sorted(set(before) - set(now)),
    }
    row = RunMetric(run_id=run_id, name=REPLICA_CHANGES_METRIC, value=[*changes, change]).row(now_iso())
    conn.execute(upsert_statement(conn.dialect.name, run_metrics, tuple(row)), [row])
    return change


def read_settings(conn: Connection, run_id: str) -> dict[str, Any] | None:
    """The stored settings of a run, or None for a run created before settings were stored."""
    query = select(run_metrics.c.value).where(
        run_metrics.c.run_id == run_id, run_metrics.c.name == SETTINGS_METRIC
    )
    value = conn.execute(query).scalar_one_or_none()
    if value is None:
        return None
    settings = json.loads(value)
    return settings if isinstance(settings, dict) else None


def _shown(value: Any) -> str:
    if value is _ABSENT:
        return "(not set)"
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= _SHOWN_CHARS else text[: _SHOWN_CHARS - 3] + "..."


def settings_changes(stored: Mapping[str, Any], given: Mapping[str, Any]) -> list[str]:
    """``"key: stored X, now Y"`` for every setting that differs, in key order."""
    changes = []
    for key in sorted(set(stored) | set(given)):
        old, new = stored.get(key, _ABSENT), given.get(key, _ABSENT)
        if old != new:
            changes.append(f"{key}: stored {_shown(old)}, now {_shown(new)}")
    return changes


def check_same_run(
    stored: RunProvenance,
    given: RunProvenance,
    stored_settings: Mapping[str, Any] | None = None,
    settings: Mapping[str, Any] | None = None,
) -> None:
    """Refuse a resume whose provenance differs, naming the changed settings when both are known.

    The endpoints may differ (replicas are interchangeable; the caller records the change). A
    config hash that differs while the replica-neutral settings agree is a replica change of a run
    whose hash still counted its replicas' URLs: accepted too.
    """
    old, new = stored.model_dump(mode="json"), given.model_dump(mode="json")
    differing = [name for name in old if old[name] != new[name] and name != "endpoints"]
    changes: list[str] = []
    if stored_settings is not None and settings is not None:
        changes = settings_changes(replica_neutral(stored_settings), replica_neutral(settings))
        if not changes and "config_hash" in differing:
            differing.remove("config_hash")
    if not differing:
        return
    if changes:
        # The settings say what the config hash stands for; the other fields are named as before.
        shown = [name for name in differing if name != "config_hash"]
        details = [*changes, *(f"{name}: stored {old[name]!r}, now {new[name]!r}" for name in shown)]
        summary = f"its provenance differs in {len(details)} setting(s): " + "; ".join(details)
    else:
        summary = (
            "its provenance differs ("
            + "; ".join(f"{name}: stored {old[name]!r}, now {new[name]!r}" for name in differing)
            + ")"
        )
        if "config_hash" in differing and stored_settings is None:
            summary += "; the run predates stored settings, so the changed ones cannot be named"
    raise RunInputsChanged(
        f"cannot resume run {stored.run_id!r}: {summary}; start a new run id for a different configuration",
        differences=summary,
        run_id=stored.run_id,
        fields=differing,
        settings=[change.split(":", 1)[0] for change in changes],
    )
