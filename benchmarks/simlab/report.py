"""The efficiency setups' tables, rendered from the runs' records alone (the results file holds
them, so a later run can be set beside an earlier one)."""

from __future__ import annotations

import json
import statistics
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from simlab.marks import NO_EFFECT, MarkSummary, Reading, accept_of, point_at, read_mark, summarize
from simlab.world import Point
from skillharness.util.atomic import atomic_write_text

GEPA_SOURCE = (
    "GEPA 0.1.4, defaults, same splits, on the flattering world (ρ 0.4, a proposer that always heeds "
    "the under-test block, filler worth exactly 0; ../shared/notes/training-efficiency.md); on the "
    "honest world: benchmarks/peer_gepa.py --reread benchmarks/results/gepa-honest-8k.json"
)
# Test gap closure, mean over seeds 0–4 (question-level) and 0–2 (video-level), realistic world as
# it was before the honest-world knobs (docs/simulator.md).
GEPA_CLOSURE = {
    "videomme-q": {2_000: "5.5 %", 8_000: "14.3 %", 32_000: "14.4 % (seeds 0–2)"},
    "videomme-v": {8_000: "7.0 %", 32_000: "14.6 %"},
}
GEPA_HARMFUL = "41–55 %"
CLOSURE_TARGETS = {"videomme-q": {8_000: 0.25, 32_000: 0.50}, "videomme-v": {8_000: 0.30, 32_000: 0.70}}
HARM_TARGET = 0.05
UNSPENT_LIMIT = 0.10
CURVE_GRID = (500, 1_000, 2_000, 4_000, 8_000, 16_000, 32_000)


def ok_records(records: Sequence[dict[str, Any]], setup: str) -> list[dict[str, Any]]:
    return [r for r in records if r["setup"] == setup and "error" not in r]


def readings(records: Sequence[dict[str, Any]], setup: str, budget: int) -> list[Reading]:
    """Each seed's reading at ``budget`` (from the run given it, or a larger one read there)."""
    key = str(budget)
    return [Reading(**r["readings"][key]) for r in ok_records(records, setup) if key in r["readings"]]


def curve_of(record: dict[str, Any]) -> list[Point]:
    return [Point(**p) for p in record["curve"]]


def verdicts(setup: str, summary: MarkSummary) -> str:
    """The issue's targets this row can judge: closure at the budget, and the harmful share."""
    out = []
    target = CLOSURE_TARGETS.get(setup, {}).get(summary.budget)
    if target is not None:
        out.append(f"≥ {target:.0%}: {'met' if summary.closure.mean >= target else 'missed'}")
    share = summary.harmful_share
    if share is not None:
        out.append(f"harm ≤ {HARM_TARGET:.0%}: {'met' if share <= HARM_TARGET else 'missed'}")
    return "; ".join(out) or "–"


def _pct(value: float) -> str:
    return f"{value * 100:.1f} %"


def _reasons(summary: MarkSummary) -> str:
    return ", ".join(f"{reason} ×{n}" for reason, n in sorted(summary.end_reasons.items()))


def _row(setup: str, summary: MarkSummary) -> str:
    c = summary.closure
    harmful = f"{summary.harmful_test}/{summary.accepts}"
    if summary.lines:  # harm per inserted line, beside the accepts
        harmful += f"; lines {summary.harmful_lines}/{summary.lines}"
    if summary.harmful_share is not None:
        harmful += f" ({summary.harmful_share:.0%})"
    per_point = "n/a (no gap closed)"
    if summary.calls_per_point is not None:
        per_point = f"{summary.calls_per_point:,.0f}"
    return (
        f"| {setup} | {summary.budget:,} | ours | {c.n} | {_pct(c.mean)} | {_pct(c.low)}–{_pct(c.high)} "
        f"| {_pct(c.sd)} | {harmful} | {summary.alpha_sum:.2f} | {per_point} "
        f"| {_pct(summary.unspent.mean)} (max {_pct(summary.unspent.high)}) | {_reasons(summary)} "
        f"| {verdicts(setup, summary)} |"
    )


def _peer(setup: str, budget: int) -> str | None:
    figure = GEPA_CLOSURE.get(setup, {}).get(budget)
    if figure is None:
        return None
    return f"| {setup} | {budget:,} | GEPA¹ | | {figure} | | | {GEPA_HARMFUL} | | | | | |"


def summary_table(records: Sequence[dict[str, Any]], setups: Sequence[str], budgets: Sequence[int]) -> str:
    lines = [
        "| setup | budget | who | seeds | test gap closure | min–max | sd | true test effect ≤ 0 "
        "| Σα | calls / point | budget unspent | end reasons | targets |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for setup in setups:
        for budget in sorted(budgets):
            found = readings(records, setup, budget)
            if found:
                lines.append(_row(setup, summarize(found)))
            peer = _peer(setup, budget)
            if peer is not None:
                lines.append(peer)
    return "\n".join(lines) + "\n"


def curve_table(records: Sequence[dict[str, Any]], setups: Sequence[str]) -> str:
    """Mean (min–max) test gap closure over seeds at each grid mark the runs' budgets reach."""
    top = max((r["budget"] for r in records), default=0)
    grid = sorted({g for g in CURVE_GRID if g <= top} | ({top} if top else set()))
    lines = ["| setup | " + " | ".join(f"{g:,} calls" for g in grid) + " |", "|---|" + "---|" * len(grid)]
    for setup in setups:
        runs = [r for r in ok_records(records, setup) if r["budget"] == top]
        if not runs:
            continue
        cells = []
        for g in grid:
            values = [point_at(curve_of(r), g).closure_test for r in runs]
            cells.append(f"{_pct(statistics.fmean(values))} ({_pct(min(values))}–{_pct(max(values))})")
        lines.append(f"| {setup} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def bounds(records: Sequence[dict[str, Any]]) -> str:
    """The run-level bound each run states (its final metrics), else its alpha-spending setting."""
    found = set()
    for r in records:
        if "error" in r:
            continue
        stated = r.get("run_metrics", {}).get("alpha_spent", {}).get("bound")
        found.add(stated or f"train.gate.alpha_spending = {r['alpha_spending']} (no final metrics: stopped)")
    return "; ".join(sorted(found)) or "–"


# The val-to-test columns of a run (ours here, the GEPA peer's in peer_gepa.py): val gap closure
# beside test gap closure, and the inserted lines whose true effect on test, added alone, is <= 0.
VAL_TEST_HEAD = "val gap closure | test gap closure | val − test | harmful or useless lines (on test)"


def val_test_cells(closure_val: float, closure_test: float, lines: int, harmful_lines: int) -> str:
    """The val-to-test cells of one run, ``VAL_TEST_HEAD``'s order, joined by `` | ``."""
    share = f"{harmful_lines}/{lines}" + (f" ({harmful_lines / lines:.0%})" if lines else "")
    gap = (closure_val - closure_test) * 100
    return f"{_pct(closure_val)} | {_pct(closure_test)} | {gap:+.1f} points | {share}"


def line_counts(record: dict[str, Any]) -> tuple[int, int]:
    """(lines the run's accepts inserted, those whose true test effect, added alone, is <= 0)."""
    return _lines_of(record["accepts"])


def _lines_of(accepts: Sequence[dict[str, Any]]) -> tuple[int, int]:
    effects = [float(line["effect_test"]) for a in accepts for line in a.get("lines", ())]
    return len(effects), sum(e <= NO_EFFECT for e in effects)


# How an accept was tested (simlab.efficiency.accept_kind); results measured before it was recorded
# read "not recorded".
ACCEPT_KINDS = ("own", "merged", "at_once", "not recorded")


def kind_table(records: Sequence[dict[str, Any]], setups: Sequence[str]) -> str:
    """Per setup, over its runs to their end: the lines inserted by each kind of accept, and how many
    of them are <= 0 on test (a line in a merged set or an epoch end's update has no test alone)."""
    lines = [
        "| setup | " + " | ".join(ACCEPT_KINDS) + " |",
        "|---|" + "---|" * len(ACCEPT_KINDS),
    ]
    for setup in setups:
        accepts = [a for r in ok_records(records, setup) for a in r["accepts"]]
        counts = [_lines_of([a for a in accepts if a.get("kind", "not recorded") == k]) for k in ACCEPT_KINDS]
        cells = [f"{bad}/{n}" if n else "–" for n, bad in counts]
        lines.append(f"| {setup} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def runs_table(records: Sequence[dict[str, Any]]) -> str:
    lines = [
        "| setup | seed | budget | calls spent | end | wall s | s / 1,000 calls | trained classes "
        f"| accepts | tests open at the end | {VAL_TEST_HEAD} |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in records:
        if "error" in r:
            head = f"| {r['setup']} | {r['seed']} | {r['budget']:,} | failed: {r['error']}"
            lines.append(head + " |" * 11)
            continue
        per_k = r["wall_s"] / max(r["spent"], 1) * 1000
        cells = val_test_cells(r["closure_val"], r["closure_test"], *line_counts(r))
        lines.append(
            f"| {r['setup']} | {r['seed']} | {r['budget']:,} | {r['spent']:,} | {r['end_reason']} "
            f"| {r['wall_s']:.0f} | {per_k:.1f} | {len(r['trained_classes'])} | {len(r['accepts'])} "
            f"| {r.get('open_at_end', '–')} | {cells} |"
        )
    return "\n".join(lines) + "\n"


def reread(records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """``records`` with every reading taken again from its stored curve and accepts (at or before
    each mark: :func:`simlab.marks.point_at`); failed runs as they are."""
    out = []
    for r in records:
        if "error" in r:
            out.append(r)
            continue
        marks = [accept_of(a) for a in r["accepts"]]
        again = {
            key: asdict(read_mark(curve_of(r), marks, int(key), end_reason=r["end_reason"], spent=r["spent"]))
            for key in r["readings"]
        }
        out.append({**r, "readings": again})
    return out


def marks_table(records: Sequence[dict[str, Any]], budgets: Sequence[int]) -> str:
    """Each run at each mark: its test gap closure and the calls spent at the checkpoint read."""
    head = "| setup | seed | " + " | ".join(f"{b:,} calls" for b in budgets) + " |"
    lines = [head, "|---|---|" + "---|" * len(budgets)]
    for r in records:
        if "error" in r:
            continue
        cells = []
        for b in budgets:
            reading = r["readings"].get(str(b))
            cells.append(
                "–" if reading is None else f"{_pct(reading['closure_test'])} at {reading['calls']:,}"
            )
        lines.append(f"| {r['setup']} | {r['seed']} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def section(
    title: str, header: str, records: Sequence[dict[str, Any]], setups: Sequence[str], budgets: Sequence[int]
) -> str:
    return (
        f"### {title}\n\n{header}\n\n"
        + summary_table(records, setups, budgets)
        + f"\n¹ {GEPA_SOURCE}.\n\nRun-level bound: {bounds(records)}.\n\n"
        + "Test gap closure against calls (mean over seeds, min–max):\n\n"
        + curve_table(records, setups)
        + "\nEach run at each mark (the last checkpoint at or before it, and the calls spent there):\n\n"
        + marks_table(records, budgets)
        + "\nLines ≤ 0 on test over the lines inserted, by how their accept was tested (every run "
        + "to its end; own: its own test; merged: a merged set; at_once: an epoch end's update):\n\n"
        + kind_table(records, setups)
        + "\nRuns:\n\n"
        + runs_table(records)
    )


def write_results(path: Path, meta: dict[str, Any], records: Sequence[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps({**meta, "runs": list(records)}, indent=1, sort_keys=True) + "\n")
