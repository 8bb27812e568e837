"""How big ``experiment init`` makes the pools when no ``--sizes`` is given, and why.

A split is judged by what training can do with it, through the one rule training uses
(:func:`skillharness.train.validate.class_coverage`): a class trains when it has a train question
and at least ``train.gate.min_distinct`` distinct val questions (and, at temperature 0, enough
for its gate to accept). init tries these shares of the units, in order, and takes the first
under which at least half of the classes train:

- 7:3:20, Video-MME's 210/90/600 of 900 videos: most units go to the sealed test pool;
- 1:1:2, for a smaller file: the val pool grows so that a claim rests on enough questions;
- 1:2:1, the most val the data can give while train and test keep a quarter each.

When none reaches half, it takes the one under which the most classes train (the larger test
pool on a tie). When not one class trains even under 1:2:1, no split of this data can meet
``min_distinct``: init then lowers ``train.gate.min_distinct`` in experiment.yaml to what the
data gives the median class (never below :data:`MIN_DISTINCT_FLOOR`) and prints it and why. The
lowering changes what an accept is a claim about (a handful of questions, which only the holdout
can generalize), not the gate's error rate: it is written into the file, never silent. Below the
floor nothing is lowered, and init says which setting and value would train a class.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from skillharness.commands.split import split_coverage, split_params
from skillharness.data import Question, Split, group_units, make_split
from skillharness.errors import ConfigError
from skillharness.train.config import GateConfig

__all__ = ["MIN_DISTINCT_FLOOR", "SHARES", "SizeChoice", "choose_split"]

SHARES: tuple[tuple[int, int, int], ...] = ((7, 3, 20), (1, 1, 2), (1, 2, 1))
# A class with fewer distinct val questions than this makes every question a fifth or more of
# its claim: below it a lowered min_distinct would be a claim about single questions.
MIN_DISTINCT_FLOOR = 5
# A user who set the gate's minimum in the environment has decided it: init never lowers it.
_MIN_DISTINCT_ENV = "SKILLHARNESS_TRAIN__GATE__MIN_DISTINCT"


@dataclass(frozen=True)
class SizeChoice:
    """The split init freezes, and what it printed about choosing it."""

    split: Split
    min_distinct: int | None  # train.gate.min_distinct to write (lowered), None: the default stands
    min_distinct_note: str  # why it was lowered ("" when it was not)
    lines: tuple[str, ...]  # what init prints: the sizes and why


@dataclass(frozen=True)
class _Option:
    shares: tuple[int, int, int]
    split: Split
    trained: int  # classes that train under the gate's min_distinct
    val_counts: dict[str, int]  # distinct val questions per class that has a train question


def choose_split(
    rows: Sequence[Question], sizes: str | None, flags: dict[str, Any], gate: GateConfig, temperature: float
) -> SizeChoice:
    """The split of ``rows``: ``--sizes`` as given, or sized from the data (module docstring).

    ``flags`` are the other split flags (unit, sample, min_val_per_class, exclude_task_types, seed).
    Raises ConfigError naming ``--sizes`` when it asks for more units than the data holds.
    """
    available = _available(rows, flags)
    unit = flags["unit"]
    if sizes is not None:
        params = split_params(sizes, **flags)
        if sum(params.sizes) > available:
            raise ConfigError(
                f"--sizes {sizes} asks for {sum(params.sizes)} {unit} units; the questions hold only "
                f"{available}{_after(flags)}. Give sizes that sum to at most {available}, or leave "
                "--sizes out and init sizes the split from the data",
                field="--sizes",
                available=available,
            )
        return SizeChoice(make_split(rows, params), None, "", ())
    options = [_option(rows, shares, available, flags, gate, temperature) for shares in SHARES]
    classes = len({q.task_type for q in rows} - set(flags["exclude_task_types"]))
    half = math.ceil(classes / 2)
    chosen = next((o for o in options if o.trained >= half), None)
    if chosen is None:  # the most classes (the larger test pool on a tie); none: the most val
        best = max(options, key=lambda o: o.trained)
        chosen = best if best.trained else options[-1]
    lines = [_sizes_line(chosen, available, unit, classes, half, gate, options)]
    if chosen.trained or os.environ.get(_MIN_DISTINCT_ENV):
        return SizeChoice(chosen.split, None, "", tuple(lines))
    return _lowered(rows, chosen, gate, temperature, classes, lines)


def _available(rows: Sequence[Question], flags: dict[str, Any]) -> int:
    if flags["unit"] not in ("video", "question"):
        raise ConfigError(f"--unit must be 'video' or 'question', got {flags['unit']!r}", field="--unit")
    kept = [q for q in rows if q.task_type not in flags["exclude_task_types"]]
    units = len(group_units(kept, flags["unit"]))
    sample = flags.get("sample")
    return min(units, sample) if sample else units


def _after(flags: dict[str, Any]) -> str:
    named = (("--exclude-task-types", "exclude_task_types"), ("--sample", "sample"))
    given = [flag for flag, key in named if flags[key]]
    return f" (after {' and '.join(given)})" if given else ""


def _scaled(available: int, shares: tuple[int, int, int]) -> tuple[int, int, int]:
    total = sum(shares)
    train = max(1, round(available * shares[0] / total))
    val = max(1, round(available * shares[1] / total))
    return train, val, max(0, available - train - val)


def _option(
    rows: Sequence[Question],
    shares: tuple[int, int, int],
    available: int,
    flags: dict[str, Any],
    gate: GateConfig,
    temperature: float,
) -> _Option:
    sizes = ",".join(str(n) for n in _scaled(available, shares))
    split = make_split(rows, split_params(sizes, **flags))
    coverage = split_coverage(split, rows, gate, temperature)
    trained = sum(not c.micro for c in coverage.values())
    return _Option(shares, split, trained, {t: c.val for t, c in coverage.items() if c.train})


def _ratio(shares: tuple[int, int, int]) -> str:
    return ":".join(str(s) for s in shares)


def _sizes_line(
    chosen: _Option,
    available: int,
    unit: str,
    classes: int,
    half: int,
    gate: GateConfig,
    options: Sequence[_Option],
) -> str:
    train, val, test = (len(chosen.split.pools[p]) for p in ("train", "val", "test"))
    head = (
        f"sizes (no --sizes given): train {train}, val {val}, test {test} of the {available} {unit} "
        f"units (shares {_ratio(chosen.shares)})"
    )
    tried = options[: options.index(chosen)]  # the shares tried before the chosen one
    rule = f"train.gate.min_distinct={gate.min_distinct} distinct val questions and a train question"
    if chosen.trained >= half:
        why = f"{chosen.trained} of {classes} classes get {rule}"
    elif chosen.trained:
        why = f"the most classes that get {rule}: {chosen.trained} of {classes}"
    else:
        why = f"no class gets {rule} under any shares init tries, so it takes the most val the data can give"
    if tried and chosen.trained:
        why += "; " + ", ".join(f"shares {_ratio(o.shares)} give {o.trained}" for o in tried)
    return f"{head}: {why}. Pass --sizes TRAIN,VAL,TEST to choose them yourself."


def _lowered(
    rows: Sequence[Question],
    chosen: _Option,
    gate: GateConfig,
    temperature: float,
    classes: int,
    lines: list[str],
) -> SizeChoice:
    counts = sorted(chosen.val_counts.values(), reverse=True)
    median = counts[min(len(counts), math.ceil(classes / 2)) - 1] if counts else 0
    most = counts[0] if counts else 0
    value = max(MIN_DISTINCT_FLOOR, median)
    lowered = gate.model_copy(update={"min_distinct": value})
    coverage = split_coverage(chosen.split, rows, lowered, temperature)
    trained = sorted(c.val for c in coverage.values() if not c.micro)
    if not trained:
        best = max(coverage.values(), key=lambda c: (c.val, c.train))
        fix = f"set train.gate.min_distinct: {max(most, 1)} in experiment.yaml to accept claims about {most}"
        lines.append(
            f"no class can train on this data, whatever the split: the best-covered class, {best.task_type}, "
            f"has {best.val} distinct val question(s) ({best.reason()}), and init lowers "
            f"train.gate.min_distinct to {MIN_DISTINCT_FLOOR} at the least. Use more data"
            + (
                f", or {fix} question(s) per class"
                if best.reachable
                else ", or --temperature above 0 (its gate then draws with replacement)"
            )
        )
        return SizeChoice(chosen.split, None, "", tuple(lines))
    reason = (
        f"none of the splits init tries gives a class {gate.min_distinct} distinct val questions "
        f"(the most is {most}); with {value}, {len(trained)} of {classes} classes train. Their accepts are "
        f"claims about {trained[0]}-{trained[-1]} questions each, and only the holdout says whether they "
        "generalize; the gate's error rate is unchanged"
    )
    lines.append(
        f"train.gate.min_distinct: {value} in experiment.yaml (lowered from {gate.min_distinct}): "
        f"{reason}. For claims at {gate.min_distinct}, use more data."
    )
    note = f"Lowered from {gate.min_distinct} by `experiment init`: {reason}."
    return SizeChoice(chosen.split, value, note, tuple(lines))
