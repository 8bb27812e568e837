"""The report's figures, drawn with matplotlib and embedded as inline SVG.

matplotlib's SVG backend writes plain vector markup: no script, no font file, no network, so the
page stays one self-contained file that any browser opens from disk. Text is kept as SVG text
(``svg.fonttype: none``) for size, and ids are salted so the same data gives the same bytes.
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from skillharness.data import slugify
from skillharness.eval.report.model import CurvePoint, EpochEnd, GateView, RoleUsage

if TYPE_CHECKING:  # matplotlib is imported where a figure is drawn: every command imports this layer
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["cost_svg", "gates_svg", "learning_curves_svg"]

_RC = {"svg.fonttype": "none", "svg.hashsalt": "skillharness-report", "font.size": 8}
MAX_GATE_PANELS = 60  # small multiples beyond this are left to the table (the page would be huge)


def _svg(fig: Figure) -> str:
    # Fixed margins, no "tight" bounding box: measuring every text extent is what makes many
    # small panels slow to save.
    buffer = io.StringIO()
    import matplotlib

    with matplotlib.rc_context(_RC):
        fig.savefig(buffer, format="svg", metadata={"Date": None})
    text = buffer.getvalue()
    return text[text.index("<svg") :]  # drop the XML prolog and doctype: inline in HTML


def _figure(width: float, height: float, **margins: float) -> Figure:
    import matplotlib
    from matplotlib.figure import Figure

    with matplotlib.rc_context(_RC):
        fig = Figure(figsize=(width, height))
    fig.subplots_adjust(**margins)
    return fig


_ACCEPT = "#2a9d8f"
_LINE = "#264653"
_CURVE_COLS = 5  # 12 classes and the overall panel: 3 rows across the page


def _overall_panel(ax: Axes, points: Sequence[CurvePoint], ends: Sequence[EpochEnd]) -> None:
    """All of val after each decision (dashed), the epoch-end val scores, every accepted edit."""
    ax.plot(
        [p.index for p in points],
        [p.val_accuracy if p.val_accuracy is not None else math.nan for p in points],
        color="black",
        linestyle="--",
        linewidth=0.9,
    )
    for p in points:
        if p.accepted:
            ax.axvline(p.index, color=_ACCEPT, alpha=0.35, linewidth=1)
    last_of_epoch = {p.epoch: p.index for p in points}
    for end in ends:
        err = None
        if end.low is not None and end.high is not None:
            err = [[max(0.0, end.accuracy - end.low)], [max(0.0, end.high - end.accuracy)]]
        x = last_of_epoch.get(end.epoch, len(points))
        ax.errorbar([x], [end.accuracy], yerr=err, fmt="D", color="#e76f51", capsize=3, markersize=4)
    ax.set_title("all of val; epoch-end val (diamonds)", fontsize=8)


def _class_panel(ax: Axes, points: Sequence[CurvePoint], task_type: str) -> None:
    """One class: its γ-EMA (line), its accuracy after each decision on it (dots), its accepts."""
    target = f"skill:{slugify(task_type)}"
    ax.plot([p.index for p in points], [p.ema.get(task_type, math.nan) for p in points], color=_LINE)
    own = [p for p in points if p.target == target and p.target_accuracy is not None]
    ax.scatter([p.index for p in own], [p.target_accuracy for p in own], color=_LINE, s=9, zorder=3)
    for p in points:
        if p.accepted and p.target == target:
            ax.axvline(p.index, color=_ACCEPT, alpha=0.6, linewidth=1.2)
    ax.set_title(task_type, fontsize=8)


def learning_curves_svg(
    points: Sequence[CurvePoint], ends: Sequence[EpochEnd], task_types: Sequence[str]
) -> str:
    """Small multiples: all of val first, then one panel per class, on shared axes.

    One panel per class keeps 12 classes readable where 12 lines in one panel would overlap and
    share one legend; each panel is named by its class, so no legend is needed.
    """
    panels = 1 + len(task_types)
    cols = min(_CURVE_COLS, panels)
    rows = math.ceil(panels / cols)
    height = 1.7 * rows + 0.3
    fig = _figure(2.3 * cols, height, left=0.05, right=0.99, bottom=0.5 / height, top=1 - 0.25 / height)
    fig.subplots_adjust(hspace=0.55, wspace=0.15)
    axes = fig.subplots(rows, cols, sharex=True, sharey=True, squeeze=False).flat
    _overall_panel(next(axes), points, ends)
    for ax, task_type in zip(axes, task_types, strict=False):
        _class_panel(ax, points, task_type)
    for i, ax in enumerate(fig.axes):
        if i >= panels:
            ax.set_visible(False)
            continue
        ax.set_ylim(-0.02, 1.02)
        ax.grid(alpha=0.3)
        ax.tick_params(labelsize=6, labelbottom=True)
    fig.supxlabel("decision (accepted edits marked by green lines)", fontsize=8)
    fig.supylabel("val accuracy", fontsize=8)
    return _svg(fig)


def _gate_panel(ax: Axes, gate: GateView) -> None:
    # The path up to the deciding observation in full, the rest of its stage lighter: the decision
    # rests on the first part only.
    path = [d for d in gate.path if d.arm == "target"]  # the guard's draws are not on the gate's axis
    cut = len(path)
    if gate.decided_at is not None:
        cut = next((i + 1 for i, d in enumerate(path) if d.draw_index == gate.decided_at), cut)
    for part, alpha, labelled in ((path[:cut], 1.0, True), (path[max(cut - 1, 0) :], 0.3, False)):
        if len(part) < (1 if labelled else 2):
            continue
        xs = [d.draw_index + 1 for d in part]
        ax.plot(
            xs,
            [max(d.wealth, 1e-6) for d in part],
            color="#264653",
            linewidth=1.2,
            alpha=alpha,
            label="wealth" if labelled else None,
        )
        ax.plot(
            xs,
            [max(d.harm_wealth, 1e-6) for d in part],
            color="#e76f51",
            linewidth=1,
            linestyle="--",
            alpha=alpha,
            label="harm" if labelled else None,
        )
    if gate.threshold:
        ax.axhline(gate.threshold, color="black", linewidth=0.8, linestyle=":", label="1/α")
    for end in gate.stage_ends:
        ax.axvline(end + 0.5, color="#999999", linewidth=0.6, alpha=0.6)
    ax.set_yscale("log")
    # Plain tick labels: log axes otherwise render every label through mathtext (slow, bulky SVG).
    from matplotlib.ticker import FuncFormatter, NullFormatter

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
