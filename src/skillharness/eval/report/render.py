"""Render a :class:`ReportData` into one self-contained HTML page, and write it with its JSON.

The page is a Jinja2 template shipped in the package (``StrictUndefined``: a missing value is an
error, never a blank). Figures are inline SVG, the little script is inline: the file makes no
network request and needs no server.
"""

from __future__ import annotations

import math
import os
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

from skillharness.eval.report.group_scores import holdout_group_scores
from skillharness.eval.report.model import Headline, ReportData
from skillharness.eval.report.plots import MAX_GATE_PANELS, cost_svg, gates_svg, learning_curves_svg
from skillharness.skills import EditTarget
from skillharness.train import UNTESTED_LABELS
from skillharness.util.atomic import atomic_open

__all__ = ["SECTIONS", "ReportFiles", "render_html", "verdict", "write_report"]

SECTIONS = (
    ("overview", "Overview"),
    ("curves", "Learning curves"),
    ("gates", "Gates"),
    ("edits", "Edits"),
    ("diagnosis", "Diagnosis"),
    ("holdout", "Holdout"),
    ("cost", "Cost"),
)
DETAIL_CHARS = 60  # a longer gate detail opens from a one-line gist (it may be 600 characters)


@dataclass(frozen=True)
class ReportFiles:
    html: Path
    json: Path


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and not math.isfinite(value))


def _pct(value: Any) -> str:
    return "-" if _missing(value) else f"{100 * float(value):.1f}%"


def _signed(value: Any) -> str:
    return "-" if _missing(value) else f"{100 * float(value):+.1f} pt"


def _num(value: Any, digits: int = 3) -> str:
    if _missing(value):
        return "-"
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    if isinstance(value, int):
        return str(value)
    number = float(value)
    if number != 0 and (abs(number) >= 1e6 or abs(number) < 10 ** (-digits)):
        return f"{number:.3g}"
    return f"{number:.{digits}f}"


def _duration(seconds: Any) -> str:
    if _missing(seconds):
        return "-"
    total = round(float(seconds))
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h {minutes:02d}m {secs:02d}s" if hours else f"{minutes}m {secs:02d}s"


def _cell(value: Any) -> str:
    return _num(value, 4) if isinstance(value, float) else ("-" if value is None else str(value))


def verdict(headline: Headline) -> str:
    """One sentence: did the final bundle beat the baseline on this pool, by its paired interval?"""
    gain = headline.gain or {}
    pool = f"{headline.pool} ({headline.note})" if headline.note else headline.pool
    if headline.final is None:
        return f"{pool}: no final score yet."
    if "low" not in gain or "high" not in gain:
        return f"{pool}: no interval on the difference stored."
    change = f"{_signed(gain.get('gain'))} [{_signed(gain['low'])}, {_signed(gain['high'])}]"
    if gain["low"] > 0:
        return f"{pool}: training helped, {change}; the interval excludes zero."
    if gain["high"] < 0:
        return f"{pool}: training hurt, {change}; the interval excludes zero."
    return f"{pool}: no clear change, {change}; the interval includes zero."


def _environment() -> Environment:
    env = Environment(
        loader=PackageLoader("skillharness.eval.report", "templates"),
        autoescape=select_autoescape(["html", "j2"], default=True),
        undefined=StrictUndefined,
        keep_trailing_newline=True,
    )
    env.filters.update(pct=_pct, signed=_signed, num=_num, duration=_duration, cell=_cell)
    return env


def _holdout_groups(data: ReportData) -> dict[str, dict[str, Any]]:
    groups: dict[str, dict[str, Any]] = {}
    for row in data.holdout_rows:
        group = groups.setdefault(row.group, {"columns": [], "rows": []})
        group["rows"].append(row)
        for column in row.cells:
            if column not in group["columns"]:
                group["columns"].append(column)
    return groups


def _verdicts(data: ReportData) -> tuple[list[str], list[tuple[str, str, dict[str, int]]]]:
    causes = sorted({d.cause for d in data.diagnoses})
    table: dict[tuple[str, str], dict[str, int]] = defaultdict(dict)
    for d in data.diagnoses:
        table[(d.run_id, d.task_type)][d.cause] = d.n
    return causes, [(run, task_type, row) for (run, task_type), row in table.items()]


def _line_harm(data: ReportData) -> list[str]:
    """The simulator's count of harmful or useless lines among every accepted edit's inserted lines."""
    scored = [g for g in data.gates if g.accepted and g.sim_lines is not None]
    if not scored:
        return []
    lines = sum(len(g.sim_lines or ()) for g in scored)
    harmful = sum(g.harmful_lines for g in scored)
    share = f" ({harmful / lines:.0%})" if lines else ""
    return [
        f"Simulator truth, per line: {harmful} of the {lines} lines the {len(scored)} accepted edit(s) "
        f"inserted are harmful or useless on val when added alone{share}."
    ]


def micro_targets(final: dict[str, Any] | None) -> set[str]:
    """The skill targets of micro classes a run trained by name: their accepts are reported apart."""
    return {EditTarget.skill(t).label() for t in (final or {}).get("micro_trained", [])}


def _context(data: ReportData) -> dict[str, Any]:
    alpha = data.alpha_spent or {}
    drawn = [g for g in data.gates if g.path]
    causes, verdicts = _verdicts(data)
    draws_by_step: dict[str, int] = defaultdict(int)
    for g in data.gates:
        draws_by_step[f"{g.epoch}:{g.step}"] += g.draws
    workspace = str((data.final or {}).get("workspace", ""))
    return {
        "d": data,
        "sections": SECTIONS,
        "experiment": workspace.split("/runs/")[0] if "/runs/" in workspace else "-",
        "alpha_sum": float(alpha.get("sum", sum(g.alpha for g in data.gates if g.draws))),
        "gates_run": int(alpha.get("gates", len(drawn))),
        # The sentence the run stated for its settings (train/gate/levels.py, run_guarantee).
        "guarantee": alpha.get("bound", ""),
        "run_accepts": alpha.get("accepts"),
        "accepted": sum(1 for g in data.gates if g.accepted),
        "untested": sum(1 for g in data.gates if g.reason in UNTESTED_LABELS),
        "untested_calls": sum(g.untested_calls for g in data.gates),
        "accepted_gates": [g for g in data.gates if g.accepted],
        "micro_targets": micro_targets(data.final),
        "verdicts_text": [verdict(h) for h in data.headlines] + _line_harm(data),
        "targets": sorted({g.target for g in data.gates}),
        "reasons": sorted({g.reason for g in data.gates}),
        "waterfall_keys": sorted({k for s in data.steps for k in s.waterfall}),
        "causes": causes,
        "verdicts": verdicts,
        "holdout_groups": _holdout_groups(data),
        "holdout_typed": any(isinstance(r.cells.get("gain"), dict) for r in data.holdout_rows),
        "group_scores": holdout_group_scores(data.holdout_raw),
        "detail_chars": DETAIL_CHARS,
        "draws_by_step": dict(draws_by_step),
        "total_draws": sum(g.draws for g in data.gates),
        "curves_svg": learning_curves_svg(data.curves, data.epoch_ends, data.task_types)
        if data.curves
        else None,
        "gates_svg": gates_svg(data.gates),
        "gates_hidden": len(drawn) > MAX_GATE_PANELS,
        "max_panels": MAX_GATE_PANELS,
        "cost_svg": cost_svg(data.usage),
    }


def render_html(data: ReportData) -> str:
    """The report page of ``data``."""
    return _environment().get_template("report.html.j2").render(_context(data))


def _write(path: Path, text: str) -> None:
    with atomic_open(path) as handle:
        os.fchmod(handle.fileno(), 0o644)  # a page to share: readable like any document, not 0600
        handle.write(text.encode("utf-8"))


def write_report(data: ReportData, out: Path | str) -> ReportFiles:
    """Write the page to ``out`` and the same data as JSON beside it (``out`` with ``.json``), atomically."""
    html_path = Path(out)
    json_path = html_path.with_suffix(".json")
    html_path.parent.mkdir(parents=True, exist_ok=True)
    _write(html_path, render_html(data))
    _write(json_path, data.model_dump_json(indent=1))
    return ReportFiles(html=html_path, json=json_path)
