"""Inserted lines, compared whole and normalised (harm per line, merge rebases)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from skillharness.skills import inserted_lines, normalised_line, with_line

_LINE = st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=40)


def test_a_line_that_is_part_of_a_longer_line_is_still_inserted() -> None:
    before = "Count every object twice before you answer.\n"
    after = before + "Count every object\n"
    assert inserted_lines(before, after) == ("Count every object",)


def test_whitespace_alone_does_not_make_a_new_line() -> None:
    before = "Read  the  captions.\n"
    assert inserted_lines(before, "  Read the captions.  \n\nCheck the clock.\n") == ("Check the clock.",)


@given(st.lists(_LINE, max_size=6), st.lists(_LINE, max_size=6))
def test_inserted_lines_are_exactly_the_new_normalised_lines(old: list[str], new: list[str]) -> None:
    before = "\n".join(old) + "\n"
    after = before + "\n".join(new) + "\n"
    found = inserted_lines(before, after)
    present = {normalised_line(line) for line in before.splitlines()}
    wanted = {normalised_line(x) for line in new for x in line.splitlines()} - present - {""}
    assert {normalised_line(line) for line in found} == wanted
    assert len(found) == len({normalised_line(line) for line in found})  # each once
    for line in found:  # a line alone added to the document it came into is found again alone
        assert inserted_lines(before, with_line(before, line)) == (line,)
