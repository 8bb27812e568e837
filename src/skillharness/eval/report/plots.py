"""The report's figures, drawn with matplotlib and embedded as inline SVG.

matplotlib's SVG backend writes plain vector markup: no script, no font file, no network, so the
page stays one self-contained file that any browser opens from disk. Text is kept as SVG text
(``svg.fonttype: none``) for size, and ids are salted so the same data gives the same bytes.
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence

import matplotlib
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, NullFormatter

from skillharness.data import slugify
from skillharness.eval.report.model import CurvePoint, EpochEnd, GateView, RoleUsage

__all__ = ["cost_svg", "gates_svg", "learning_curves_svg"]

_RC = {"svg.fonttype": "none", "svg.hashsalt": "skillharness-report", "font.size": 8}
MAX_GATE_PANELS = 60  # small multiples beyond this are left to the table (the page would be huge)


def _svg(fig: Figure) -> str:
    # Fixed margins, no "tight" bounding box: measuring every text extent is what makes many
    # small panels slow to save.
    buffer = io.StringIO()
    with matplotlib.rc_context(_RC):
        fig.savefig(buffer, format="svg", metadata={"Date": None})
    text = buffer.getvalue()
    return text[text.index("<svg") :]  # drop the XML prolog and doctype: inline in HTML


def _figure(width: float, height: float, **margins: float) -> Figure:
    with matplotlib.rc_context(_RC):
        fig = Figure(figsize=(width, height))
    fig.subplots_adjust(**margins)
    return fig


def learning_curves_svg(
    points: Sequence[CurvePoint], ends: Sequence[EpochEnd], task_types: Sequence[str]
) -> str:
    """γ-EMA per class and dual_metric accuracies over decisions, epoch-end val scores, accepts."""
    fig = _figure(9, 4.2, left=0.07, right=0.72, bottom=0.12, top=0.97)
    ax = fig.add_subplot()
    xs = [p.index for p in points]
    colors = matplotlib.colormaps["tab10"]
    for i, task_type in enumerate(task_types):
        color = colors(i % 10)
        ax.plot(xs, [p.ema.get(task_type, math.nan) for p in points], color=color, label=f"EMA {task_type}")
        own = [
            p for p in points if p.target == f"skill:{slugify(task_type)}" and p.target_accuracy is not None
        ]
        ax.scatter([p.index for p in own], [p.target_accuracy for p in own], color=color, s=12, marker="o")
    ax.plot(
        xs,
        [p.val_accuracy if p.val_accuracy is not None else math.nan for p in points],
        color="black",
        linestyle="--",
        label="val (all classes)",
    )
    for p in points:
        if p.accepted:
            ax.axvline(p.index, color="#2a9d8f", alpha=0.35, linewidth=1.2)
    last_of_epoch = {p.epoch: p.index for p in points}
    for end in ends:
        x = last_of_epoch.get(end.epoch, len(points))
        err = None
        if end.low is not None and end.high is not None:
            err = [[max(0.0, end.accuracy - end.low)], [max(0.0, end.high - end.accuracy)]]
        ax.errorbar(
            [x],
            [end.accuracy],
            yerr=err,
            fmt="D",
            color="#e76f51",
            capsize=3,
            label="epoch-end val" if end is ends[0] else None,
        )
    ax.set_xlabel("decision (accepted edits marked by green lines)")
    ax.set_ylabel("accuracy")
    ax.set_ylim(-0.02, 1.02)
    ax.grid(alpha=0.3)
    if task_types or ends:
        ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=7)
    return _svg(fig)


def _gate_panel(ax: Axes, gate: GateView) -> None:
    xs = [d.draw_index + 1 for d in gate.path]
    ax.plot(xs, [max(d.wealth, 1e-6) for d in gate.path], color="#264653", linewidth=1.2, label="wealth")
    ax.plot(
        xs,
        [max(d.harm_wealth, 1e-6) for d in gate.path],
        color="#e76f51",
        linewidth=1,
        linestyle="--",
        label="harm",
    )
    if gate.threshold:
        ax.axhline(gate.threshold, color="black", linewidth=0.8, linestyle=":", label="1/α")
    for end in gate.stage_ends:
        ax.axvline(end + 0.5, color="#999999", linewidth=0.6, alpha=0.6)
    ax.set_yscale("log")
    # Plain tick labels: log axes otherwise render every label through mathtext (slow, bulky SVG).
    ax.yaxis.set_major_formatter(FuncFormatter(lambda value, _pos: f"{value:g}"))
    ax.yaxis.set_minor_formatter(NullFormatter())
    color = "#2a9d8f" if gate.accepted else "#555555"
    ax.set_title(f"g{gate.gate_index} {gate.target}\n{gate.reason}", fontsize=7, color=color)
    ax.tick_params(labelsize=6)


def gates_svg(gates: Sequence[GateView]) -> str | None:
    """Small multiples: each gate's wealth and harm paths (log scale), the 1/α line, stage ends."""
    drawn = [g for g in gates if g.path][:MAX_GATE_PANELS]
    if not drawn:
        return None
    cols = min(4, len(drawn))
    rows = math.ceil(len(drawn) / cols)
    fig = _figure(2.4 * cols, 1.9 * rows, left=0.06, right=0.98, bottom=0.3 / rows, top=1 - 0.35 / rows)
    fig.subplots_adjust(hspace=0.75, wspace=0.3)
    for i, gate in enumerate(drawn):
        ax = fig.add_subplot(rows, cols, i + 1)
        _gate_panel(ax, gate)
        if i == 0:
            ax.legend(fontsize=6, loc="upper left")
    return _svg(fig)


def cost_svg(usage: Sequence[RoleUsage]) -> str | None:
    """Calls and tokens by role, side by side."""
    if not usage:
        return None
    fig = _figure(9, 2.6, left=0.08, right=0.98, bottom=0.12, top=0.88, wspace=0.45)
    roles = [u.role for u in usage]
    panels = [
        ("calls", [u.calls for u in usage]),
        ("tokens (prompt + completion)", [u.prompt_tokens + u.completion_tokens for u in usage]),
        ("cost", [u.cost for u in usage]),
    ]
    if not any(u.cost for u in usage):  # a local endpoint or the simulator: nothing to chart
        panels.pop()
    for i, (title, values) in enumerate(panels):
        ax = fig.add_subplot(1, len(panels), i + 1)
        ax.barh(roles, values, color="#457b9d")
        ax.set_title(title, fontsize=8)
        ax.tick_params(labelsize=7)
    return _svg(fig)
