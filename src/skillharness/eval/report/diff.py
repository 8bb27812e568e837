"""A readable unified diff of a target's document, each line marked with its skill region."""

from __future__ import annotations

import difflib

from skillharness.eval.report.model import DiffLine
from skillharness.skills.markers import APPENDIX_MARKER, MOMENTUM_MARKER

__all__ = ["document_diff", "regions_of"]

_CONTEXT = 3


def regions_of(target: str, lines: list[str]) -> list[str]:
    """The region of every line: body, momentum or appendix for a skill, empty for other targets."""
    if not target.startswith("skill"):
        return [""] * len(lines)
    regions, region = [], "body"
    for line in lines:
        if line.strip() == MOMENTUM_MARKER:
            region = "momentum"
        elif line.strip() == APPENDIX_MARKER:
            region = "appendix"
        regions.append(region)
    return regions


def document_diff(target: str, before: str, after: str | None) -> list[DiffLine]:
    """Hunks of changed lines with a little context; empty when there is no after document."""
    if after is None:
        return []
    a, b = before.splitlines(), after.splitlines()
    ra, rb = regions_of(target, a), regions_of(target, b)
    out: list[DiffLine] = []
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    for group in matcher.get_grouped_opcodes(_CONTEXT):
        first, last = group[0], group[-1]
        header = f"@@ -{first[1] + 1},{last[2] - first[1]} +{first[3] + 1},{last[4] - first[3]} @@"
        out.append(DiffLine(kind="hunk", text=header))
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out.extend(DiffLine(kind="ctx", text=a[i], region=ra[i]) for i in range(i1, i2))
                continue
            out.extend(DiffLine(kind="del", text=a[i], region=ra[i]) for i in range(i1, i2))
            out.extend(DiffLine(kind="add", text=b[j], region=rb[j]) for j in range(j1, j2))
    return out
