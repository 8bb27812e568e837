"""Rendering of a holdout report as rich tables (``skillharness eval``)."""

from __future__ import annotations

from rich.console import Console

from skillharness.commands.cells import ci, deff, p_value, pct, signed, with_ci
from skillharness.commands.fit_table import Col, FitTable
from skillharness.eval import GroupRow, GroupScores, HoldoutReport, ValHoldout
from skillharness.train import describe_unselected

__all__ = ["print_holdout"]

_TITLES = {"overall": "Overall", "task_type": "Per task type", "duration": "Per duration"}
# The simulator oracle's scored truth: what the measured accuracy estimates (not the intended letter).
_TRUTH = "scored truth"


def _table(report: HoldoutReport, grouping: str, rows: list[GroupRow]) -> FitTable:
    """One row per group; at a narrow console the columns continue in a second table."""
    level = f"{100 * report.confidence:g}% CI"
    columns = [grouping.replace("_", " "), "n", "videos", f"final % [{level} by video]"]
    columns += [f"baseline % [{level} by video]", f"gain pts [{level} by video]", "per question", "deff"]
    columns += ["+/-", "p by video", "McNemar p"]
    columns += ["Holm p"] if grouping == "task_type" else []
    columns += ["parse err % f/b"]
    columns += [f"{_TRUTH}: final / baseline / gain"] if report.simulator else []
    table = FitTable(
        _TITLES[grouping],
        [Col(columns[0], justify="left", wrap=True), *(Col(name) for name in columns[1:])],
        title_justify="left",
    )
    for row in rows:
        f, b, d = row.final, row.baseline, row.paired
        cells = [row.label, str(d.n_pairs), "-" if d.n_videos is None else str(d.n_videos)]
        cells += [with_ci(pct(f.accuracy), f.low, f.high), with_ci(pct(b.accuracy), b.low, b.high)]
        cells += [with_ci(signed(d.gain), d.low, d.high, True)]
        cells += [ci(d.per_question_low, d.per_question_high, True), deff(d.design_effect)]
        cells += [f"{d.wins}/{d.losses}", p_value(d.p_value), p_value(d.p_per_question)]
        cells += [p_value(d.p_holm)] if grouping == "task_type" else []
        cells += [f"{pct(f.parse_rate)} / {pct(b.parse_rate)}"]
        if report.simulator:
            t = row.truth
            cells += [f"{pct(t.final)} / {pct(t.baseline)} / {signed(t.gain)}" if t else "-"]
        table.add_row(*cells)
    return table


def _group_table(report: HoldoutReport, groups: GroupScores) -> FitTable:
    """Video-MME-v2's group score under the per-question accuracy it is read beside."""
    level = f"{100 * report.confidence:g}% CI by video"
    columns = [Col("score", justify="left", wrap=True), Col("n"), Col(f"final % [{level}]")]
    columns += [Col(f"baseline % [{level}]"), Col(f"gain pts [{level}]")]
    table = FitTable("Group score (Video-MME-v2)", columns, title_justify="left")
    f, b, d = report.overall.final, report.overall.baseline, report.overall.paired
    gf, gb = groups.final, groups.baseline
    for label, n, final, baseline, gain in (
        ("per-question accuracy", f"{d.n_pairs} questions", (f.accuracy, f.low, f.high),
         (b.accuracy, b.low, b.high), (d.gain, d.low, d.high)),
        ("group score", f"{groups.n_pairs} groups", (gf.score, gf.low, gf.high),
         (gb.score, gb.low, gb.high), (groups.gain, groups.low, groups.high)),
    ):  # fmt: skip
        table.add_row(
            label,
            n,
            with_ci(pct(final[0]), final[1], final[2]),
            with_ci(pct(baseline[0]), baseline[1], baseline[2]),
            with_ci(signed(gain[0]), gain[1], gain[2], True),
        )
    return table


def _group_note(groups: GroupScores) -> str:
    left = max(groups.final.left_out, groups.baseline.left_out)
    note = (
        "group score: a video's four questions scored together (relevance: (right/4)²; logic: by the "
        "run of right answers from the first, per its structure), averaged over groups; intervals "
        "resample videos"
    )
    return note + (f"; {left} group(s) missing an answer or a question left out" if left else "")


def _val_line(val: ValHoldout) -> str:
    line = (
        f"val gain ({val.selection}) {signed(val.val_gain)} pts {ci(val.val_low, val.val_high, True)}, "
        f"holdout gain {signed(val.holdout_gain)} pts"
    )
    if val.val_truth is not None or val.holdout_truth is not None:
        line += f" ({_TRUTH}: val {signed(val.val_truth)}, holdout {signed(val.holdout_truth)})"
    unselected = f"\n  {describe_unselected(val.unselected, val.unselected_truth)}" if val.unselected else ""
    if val.overfit:
        return (
            f"[bold red]OVERFITTING TO VAL[/]: {line}; the holdout gain lies outside the val gain's "
            f"interval{unselected}"
        )
    return f"{line}: the holdout gain lies inside the val gain's interval{unselected}"


def _asked_with(report: HoldoutReport) -> str:
    """Under a reference protocol: whose request, and where it carried the bundle."""
    if report.protocol == "skillharness":
        return ""
    return f", under protocol {report.protocol} (bundle slot {report.bundle_slot})"


def print_holdout(console: Console, report: HoldoutReport) -> None:
    """Final against baseline on the test pool: one table per grouping, then the notes."""
    console.print(
        f"[bold]holdout {report.eval_id}[/] ({report.purpose}): final {report.final_label} against "
        f"baseline {report.baseline_label} on {report.test_questions} test questions × {report.samples} "
        f"sample(s), temperature {report.temperature if report.temperature is not None else 'default'}"
        + _asked_with(report)
    )
    for grouping in ("overall", "task_type", "duration"):
        rows = report.rows_of(grouping)  # type: ignore[arg-type]
        if rows:
            _table(report, grouping, rows).print(console)
        if grouping == "overall" and report.group_scores is not None:
            _group_table(report, report.group_scores).print(console)
            console.print(_group_note(report.group_scores))
    method = "question bootstrap" if report.samples > 1 else "Wilson; gain: Newcombe paired"
    console.print(
        "intervals by video (a video's questions are correlated): video bootstrap, never narrower than "
        f"the per-question one ({method}), shown beside the gain with the design effect (deff). "
        "p by video: sign-flip test on videos; McNemar: exact, two-sided, on questions where the bundles "
        "differ (+/- = final better / baseline better); Holm (of p by video) across task types. "
        "Unparsed answers count as wrong."
    )
    if report.simulator:
        console.print(
            f"[yellow]{_TRUTH}[/]: the simulator oracle's exact probability that the harness scores an "
            "answer right on this run's agent path (misread questions, unparsed answers and plans over "
            "the step limit included), not a measurement."
        )
    if report.val is not None:
        console.print(_val_line(report.val))
    other = f" and {report.test_pool_other_runs} infer run(s)" if report.test_pool_other_runs else ""
    console.print(
        f"the test pool of this split has been read by {report.test_pool_runs} evaluation(s){other}, "
        "this one included; every decision taken on it erodes it as a holdout."
    )
