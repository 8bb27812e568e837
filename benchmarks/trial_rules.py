"""Benchmark: other rank-trial rules, replayed on the trials SimLab recorded.

Run: ``.venv/bin/python benchmarks/trial_rules.py RESULTS.json [RESULTS.json ...]`` on SimLab
results of ``--set evolve.rank=auto`` runs whose trial never decided (``--set
evolve.rank_trial_tests=200``). Until a verdict the trial's design is the greedy one, whatever the
rule, so each run's recorded trial tests (``rank_trial.closes``: calls, the rank role's word, the
effect estimate) are what any rule would have seen up to the point it decides. For each rule
(closed tests at the last look, looks, level) this prints how many runs it trusts the rank role
in and at what calls. A look is taken at the first recorded checkpoint (after each decision) at
or past its point; the loop judges only at a step's start, so a replayed look may come a decision
sooner. An early look trusts at level alpha / looks or waits; the last decides.
The statistic is the product's own (``judge_trial``). Seconds.
"""

from __future__ import annotations

import argparse
import json
import math
from dataclasses import dataclass
from itertools import groupby
from operator import itemgetter
from pathlib import Path

from skillharness.train.state.rank_trial import RankTrial, judge_trial

DEFAULT_RULES = (
    (24, 1, 0.05),
    (12, 1, 0.05),
    (16, 1, 0.05),
    (24, 2, 0.05),
    (24, 3, 0.05),
    (40, 5, 0.05),
    (24, 1, 0.1),
)


@dataclass(frozen=True)
class Replayed:
    verdict: str  # trusted, distrusted, or open (the run ended before the rule's last look)
    calls: int | None  # calls at the checkpoint that decided


def replay(closes: list[tuple[int, str, float]], tests: int, looks: int, alpha: float) -> Replayed:
    """The verdict a trial of ``looks`` evenly spaced looks up to ``tests`` closed tests reaches
    on ``closes`` (in the order they closed), and the calls when it does."""
    points = [math.ceil(tests * (i + 1) / looks) for i in range(looks)]
    endorsed: list[float] = []
    declined: list[float] = []
    taken = 0
    for calls, at_once in groupby(closes, key=itemgetter(0)):  # recorded in order, one group per checkpoint
        for _, word, effect in at_once:
            (endorsed if word == "endorsed" else declined).append(effect)
        closed = len(endorsed) + len(declined)
        reached = sum(closed >= point for point in points)
        if reached <= taken:
            continue
        taken = reached
        judged = judge_trial(RankTrial(endorsed=endorsed, declined=declined), closed, alpha / looks)
        if judged.verdict == "trusted" or reached == looks:
            return Replayed(judged.verdict, calls)
    return Replayed("open", None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="+", type=Path)
    args = parser.parse_args()
    for path in args.results:
        runs = json.loads(path.read_text())["runs"]
        sizes = [len(r["rank_trial"]["closes"]) for r in runs]
        print(f"{path.name}: {len(runs)} runs, trial tests closed per run {sizes}")
        for tests, looks, alpha in DEFAULT_RULES:
            out = [replay([tuple(c) for c in r["rank_trial"]["closes"]], tests, looks, alpha) for r in runs]
            trusted = sorted(o.calls for o in out if o.verdict == "trusted" and o.calls is not None)
            still = sum(o.verdict == "open" for o in out)
            rule = f"{tests} tests, {looks} look(s), alpha {alpha:g}"
            undecided = f"; {still} undecided" if still else ""
            print(f"  {rule}: trusted {len(trusted)}/{len(out)} at calls {trusted}{undecided}")


if __name__ == "__main__":
    main()
