"""The training report: one self-contained HTML page (and its JSON) of a run, read from the store.

``collect_report`` reads a run into :class:`ReportData`; ``write_report`` renders the page and
writes both files; ``add_simulator_truth`` optionally puts the simulator oracle's exact values
beside the measured ones; ``build_report`` does all three from a store URL.
"""

from skillharness.eval.report.build import build_report
from skillharness.eval.report.collect import collect_report
from skillharness.eval.report.model import ReportData
from skillharness.eval.report.oracle import add_simulator_truth
from skillharness.eval.report.render import SECTIONS, ReportFiles, render_html, write_report

__all__ = [
    "SECTIONS",
    "ReportData",
    "ReportFiles",
    "add_simulator_truth",
    "build_report",
    "collect_report",
    "render_html",
    "write_report",
]
