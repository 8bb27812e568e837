"""A run's outages for the report's cost section: failed attempts by error class and replica, and
a timeline of breaker transitions and failed attempts (read from the ``llm_events`` table)."""

from __future__ import annotations

from collections import Counter
from datetime import datetime

from skillharness.store import LLMEventRow, RunReader
from skillharness.util.model import StrictModel

__all__ = ["AttemptCount", "OutageView", "TimelineRow", "collect_outages"]


class AttemptCount(StrictModel):
    """Failed attempts of one error class on one replica, by what followed them."""

    kind: str
    endpoint: str
    total: int
    by_outcome: dict[str, int]


class TimelineRow(StrictModel):
    """A breaker transition, or the failed attempts of one second on one replica."""

    at: str
    offset_s: float | None  # seconds since the run started
    endpoint: str
    what: str


class OutageView(StrictModel):
    attempts: list[AttemptCount]
    timeline: list[TimelineRow]


def _offset(at: str, started: datetime | None) -> float | None:
    try:
        return (datetime.fromisoformat(at) - started).total_seconds() if started else None
    except ValueError:
        return None


def collect_outages(reader: RunReader, run_id: str, started_at: str | None) -> OutageView:
    """The run's failed attempts counted, and its events in time order (attempts grouped per second)."""
    rows = sorted(reader.ledger(LLMEventRow, run_id=run_id), key=lambda r: (r.at, r.seq))
    started = datetime.fromisoformat(started_at) if started_at else None
    counts: dict[tuple[str, str], Counter[str]] = {}
    timeline: list[TimelineRow] = []
    burst: dict[tuple[str, str], Counter[str]] = {}  # (second, endpoint) -> "kind outcome" -> n

    def flush() -> None:
        for (second, endpoint), kinds in burst.items():
            what = ", ".join(f"{name} ×{n}" for name, n in sorted(kinds.items()))
            timeline.append(
                TimelineRow(at=second, offset_s=_offset(second, started), endpoint=endpoint, what=what)
            )
        burst.clear()

    for row in rows:
        if row.event == "breaker":
            flush()
            what = f"breaker {row.detail} → {row.kind}"
            timeline.append(
                TimelineRow(at=row.at, offset_s=_offset(row.at, started), endpoint=row.endpoint, what=what)
            )
            continue
        counts.setdefault((row.kind, row.endpoint), Counter())[row.detail] += 1
        second = row.at[:19] + row.at[26:] if len(row.at) > 26 else row.at
        if not any(key[0] == second for key in burst):
            flush()
        burst.setdefault((second, row.endpoint), Counter())[f"{row.kind} {row.detail}"] += 1
    flush()
    attempts = [
        AttemptCount(kind=kind, endpoint=endpoint, total=sum(c.values()), by_outcome=dict(sorted(c.items())))
        for (kind, endpoint), c in sorted(counts.items())
    ]
    return OutageView(attempts=attempts, timeline=timeline)
