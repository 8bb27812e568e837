"""A run's classified settings, kept beside its provenance so a refused resume can say what changed.

The provenance holds only the settings' hash (``config_hash``). The settings themselves (dotted key
→ value, see ``skillharness.settings``) are stored as the run's ``settings`` metric when the run is
created; a resume whose hash differs names each setting that differs, with both values.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from sqlalchemy import Connection, select

from skillharness.errors import StoreError
from skillharness.store.ledger import RunMetric
from skillharness.store.records import RunProvenance
from skillharness.store.rows import now_iso
from skillharness.store.schema import run_metrics
from skillharness.store.upsert import upsert_statement

__all__ = ["SETTINGS_METRIC", "check_same_run", "read_settings", "settings_changes", "write_settings"]

SETTINGS_METRIC = "settings"
_ABSENT = object()
_SHOWN_CHARS = 120


def write_settings(conn: Connection, run_id: str, settings: Mapping[str, Any]) -> None:
    """Store ``settings`` as the run's ``settings`` metric (in the caller's transaction)."""
    row = RunMetric(run_id=run_id, name=SETTINGS_METRIC, value=dict(settings)).row(now_iso())
    conn.execute(upsert_statement(conn.dialect.name, run_metrics, tuple(row)), [row])


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
    """Refuse a resume whose provenance differs, naming the changed settings when both are known."""
    old, new = stored.model_dump(mode="json"), given.model_dump(mode="json")
    differing = [name for name in old if old[name] != new[name]]
    if not differing:
        return
    changes = settings_changes(stored_settings, settings) if stored_settings and settings else []
    if changes:
        # The settings say what the config hash stands for; the other fields are named as before.
        shown = [name for name in differing if name != "config_hash"]
        details = [*changes, *(f"{name}: stored {old[name]!r}, now {new[name]!r}" for name in shown)]
        summary = f"its provenance differs in {len(changes)} setting(s): " + "; ".join(details)
    else:
        summary = (
            "its provenance differs ("
            + "; ".join(f"{name}: stored {old[name]!r}, now {new[name]!r}" for name in differing)
            + ")"
        )
        if "config_hash" in differing and stored_settings is None:
            summary += "; the run predates stored settings, so the changed ones cannot be named"
    raise StoreError(
        f"cannot resume run {stored.run_id!r}: {summary}; start a new run id for a different configuration",
        run_id=stored.run_id,
        fields=differing,
        settings=[change.split(":", 1)[0] for change in changes],
    )
