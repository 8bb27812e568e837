"""Tables that stay readable at any console width: numbers are never cut, text may wrap.

rich shrinks a table that is too wide by cutting cells ("Acti…", "[39.…"). Every table the
commands print is built here instead: each column is either *whole* (numbers, intervals, ids:
a cell is never wrapped or cut) or *wrapping* (free text: wraps at spaces, folds a word longer
than the column). When even the narrowest layout is wider than the console, the columns after
the key columns are split over several tables, each repeating the keys, so the rows still line
up by their label. 80 columns (a common terminal, and rich's width when output is piped) and
200 columns are both tested.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text

__all__ = ["Col", "FitTable"]

_Justify = Any  # rich's JustifyMethod literal


@dataclass(frozen=True)
class Col:
    """One column: its header, its alignment, and whether its cells may wrap (free text only)."""

    header: str
    justify: _Justify = "right"
    wrap: bool = False


def _plain(cell: str) -> str:
    return Text.from_markup(cell).plain


def _longest_word(text: str) -> int:
    return max((cell_len(word) for word in text.split()), default=0)


def _longest_line(text: str) -> int:
    return max((cell_len(line) for line in text.splitlines()), default=0)


def _overhead(columns: int) -> int:
    """Padding (one space each side) and the vertical rules of the default box, edges included."""
    return 3 * columns + 1


class FitTable:
    """A table laid out for the console it is printed on (``rich.table.Table``'s add_row API)."""

    def __init__(self, title: str | None, columns: Sequence[Col], *, keys: int = 1, **options: Any) -> None:
        """``keys``: the leading columns (the row's label) repeated in every table of a split."""
        self.title, self.columns, self.keys, self.options = title, list(columns), keys, options
        self.rows: list[tuple[list[str], str | None, bool]] = []  # cells, style, ends a section

    def add_row(self, *cells: str, style: str | None = None) -> None:
        """Add a row of markup strings, one per column."""
        self.rows.append((list(cells), style, False))

    def add_section(self) -> None:
        """Draw a rule under the last row added."""
        if self.rows:
            cells, style, _ = self.rows[-1]
            self.rows[-1] = (cells, style, True)

    def _bounds(self, index: int) -> tuple[int, int]:
        """(narrowest, natural) content width of a column, headers wrapping at spaces."""
        col = self.columns[index]
        cells = [_plain(row[0][index]) for row in self.rows if index < len(row[0])]
        # The key columns are read across the split tables: they stay whole like numbers.
        cut = _longest_word if col.wrap and index >= self.keys else _longest_line
        least = max([_longest_word(col.header), *(cut(c) for c in cells)])
        most = max([cell_len(col.header), *(_longest_line(c) for c in cells)])
        return max(least, 1), max(most, least, 1)

    def _groups(self, width: int) -> list[list[int]]:
        """Column indices of each table: the keys, then as many further columns as fit."""
        least = [self._bounds(i)[0] for i in range(len(self.columns))]
        keys = list(range(min(self.keys, len(self.columns))))
        groups: list[list[int]] = []
        current: list[int] = []
        for index in range(len(keys), len(self.columns)):
            wanted = keys + current + [index]
            if current and sum(least[i] for i in wanted) + _overhead(len(wanted)) > width:
                groups.append(keys + current)
                current = []
            current.append(index)
        groups.append(keys + current)
        return groups

    def _widths(self, group: list[int], width: int) -> list[int] | None:
        """Fixed widths that fit ``width`` (None: the natural widths already fit)."""
        bounds = [self._bounds(i) for i in group]
        room = width - _overhead(len(group))
        if sum(most for _, most in bounds) <= room:
            return None
        widths = [least for least, _ in bounds]
        # Spare room goes first to free text (fewer wrapped lines), then to wrapped headers.
        wrapping = [k for k, i in enumerate(group) if self.columns[i].wrap]
        for order in (wrapping, range(len(group))):
            spare = room - sum(widths)
            while spare > 0:
                short = [k for k in order if widths[k] < bounds[k][1]]
                if not short:
                    break
                for k in short[:spare]:
                    widths[k] += 1
                spare = room - sum(widths)
        return widths

    def tables(self, width: int) -> list[Table]:
        """The table, or its columns split over several tables, for a console ``width`` wide."""
        out: list[Table] = []
        for n, group in enumerate(self._groups(width)):
            title = self.title if n == 0 or self.title is None else f"{self.title} (continued)"
            table = Table(title=title, **self.options)
            widths = self._widths(group, width)
            for k, index in enumerate(group):
                col = self.columns[index]
                fixed = None if widths is None else widths[k]
                table.add_column(col.header, justify=col.justify, overflow="fold", width=fixed)
            for cells, style, section in self.rows:
                shown = (cells[i] if i < len(cells) else "" for i in group)
                table.add_row(*shown, style=style, end_section=section)
            out.append(table)
        return out

    def print(self, console: Console) -> None:
        """Print the table(s) laid out for ``console``'s width."""
        for table in self.tables(console.width):
            console.print(table)
