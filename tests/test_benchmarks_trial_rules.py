"""benchmarks/trial_rules.py: replaying other rank-trial rules on a recorded trial."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from trial_rules import replay


def _closes(words_effects: list[tuple[str, float]], start: int = 100) -> list[tuple[int, str, float]]:
    return [(start + 100 * i, w, e) for i, (w, e) in enumerate(words_effects)]


# Eight closes that separate the groups (no ties: p = 1/70 exactly), then sixteen that reverse them.
FIRST = [("endorsed", 0.5), ("declined", -0.1), ("endorsed", 0.4), ("declined", 0.0)]
FIRST += [("endorsed", 0.6), ("declined", -0.2), ("endorsed", 0.3), ("declined", 0.1)]
REVERSED = [("endorsed", -0.3 - i / 100) for i in range(8)] + [("declined", 0.3 + i / 100) for i in range(8)]
SEPARATED = _closes(FIRST + REVERSED)


def test_a_clear_ranker_is_trusted_at_the_first_look_that_can_show_it() -> None:
    # Eight closed, four against four with no overlap: p = 1/70 < 0.05 at one look of 8 ...
    assert replay(SEPARATED, tests=8, looks=1, alpha=0.05).verdict == "trusted"
    assert replay(SEPARATED, tests=8, looks=1, alpha=0.05).calls == 800
    # ... and below 0.05 / 3 at the first of three looks up to 24, at the same checkpoint.
    assert replay(SEPARATED, tests=24, looks=3, alpha=0.05).calls == 800
    # At 0.03 over three looks (0.01 each) the first look waits; the closes that follow reverse
    # the difference, so the second look waits too and the last (24 closed) distrusts.
    late = replay(SEPARATED, tests=24, looks=3, alpha=0.03)
    assert (late.verdict, late.calls) == ("distrusted", 2400)


def test_a_run_that_ends_before_the_last_look_is_undecided() -> None:
    assert replay(SEPARATED[:10], tests=24, looks=1, alpha=0.05).verdict == "open"
    assert replay([], tests=24, looks=1, alpha=0.05).calls is None


def test_a_checkpoint_that_crosses_several_look_points_takes_one_look_and_it_decides() -> None:
    # All 24 closes recorded at one checkpoint: the first look taken is already the last.
    at_once = [(500, w, e) for _, w, e in SEPARATED]
    out = replay(at_once, tests=24, looks=3, alpha=0.03)
    assert (out.verdict, out.calls) == ("distrusted", 500)
