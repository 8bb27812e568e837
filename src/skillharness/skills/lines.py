"""Lines of a document as units of an edit: which lines an accepted edit inserted, compared whole.

A line is compared by its normalised form (whitespace runs collapsed, ends stripped), so a line
re-wrapped or re-indented is the same line, while a line that is only part of a longer one is not.
Harm is counted per inserted line: each is scored alone against the document it was added to.
"""

from __future__ import annotations

__all__ = ["inserted_lines", "normalised_line", "with_line"]


def normalised_line(line: str) -> str:
    return " ".join(line.split())


def inserted_lines(before: str, after: str) -> tuple[str, ...]:
    """The non-blank lines of ``after`` whose normalised form no line of ``before`` has, in order."""
    present = {normalised_line(line) for line in before.splitlines()}
    out: list[str] = []
    for line in after.splitlines():
        key = normalised_line(line)
        if key and key not in present:
            out.append(line.strip())
            present.add(key)
    return tuple(out)


def with_line(document: str, line: str) -> str:
    """``document`` with ``line`` added at its end: the line's effect alone."""
    return document.rstrip("\n") + "\n" + line + "\n"
