"""The frozen split: units of questions dealt into train / val / test pools.

The algorithm, in order (all randomness from one ``random.Random(seed)``, so the same input and
parameters always give the same pools):

1. Drop excluded task types; group questions into units (one video, or one question).
2. Give each unit a stratum: its duration and the globally rarest task type among its questions
   (so the rare classes, the ones a gate starves on, are spread first).
3. ``sample``: draw a stratified subsample of N units (largest-remainder allocation per stratum).
4. Deal units, ordered by stratum and shuffled within it, with a smooth weighted round-robin over
   the pool sizes: every pool gets exactly its size and every stratum is spread proportionally.
5. ``min_val_per_class``: while a task type has fewer than K val questions, swap a unit holding it
   into val (taken from test, then the unused rest, then train while train keeps one) against a
   val unit whose removal starves no class. Classes that still fall short are reported.
Which classes are *micro* (too few val questions for a claim, or none to learn from) is not the
split's to say: it depends on the gate and the temperature, and has one home,
:func:`skillharness.train.validate.coverage.class_coverage`, which the split command prints.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

from pydantic import Field, model_validator

from skillharness.data.questions import Question
from skillharness.errors import ConfigError, SplitError
from skillharness.util.model import StrictModel

__all__ = [
    "Pool",
    "Split",
    "SplitParams",
    "Unit",
    "UnitKind",
    "build_units",
    "count_table",
    "group_units",
    "make_split",
    "unit_id",
]


class Pool(StrEnum):
    """The three pools of the frozen split, in the order pools.json lists them."""

    TRAIN = "train"
    VAL = "val"
    TEST = "test"

    @classmethod
    def named(cls, value: str, *, what: str = "pool") -> Pool:
        """The pool called ``value``; ConfigError naming ``what`` (a flag or key) when there is none."""
        try:
            return cls(value)
        except ValueError:
            raise ConfigError(f"{what} must be one of {', '.join(cls)}, got {value!r}") from None


UnitKind = Literal["video", "question"]


def unit_id(question: Question, unit: UnitKind) -> str:
    """The unit ``question`` belongs to: its video (so no video is split across pools or training
    steps), or the question alone."""
    return question.video_id if unit == "video" else question.question_id


def group_units(questions: Sequence[Question], unit: UnitKind) -> list[tuple[Question, ...]]:
    """``questions`` grouped by :func:`unit_id`, units and their questions in first-seen order."""
    grouped: dict[str, list[Question]] = {}
    for q in questions:
        grouped.setdefault(unit_id(q, unit), []).append(q)
    return [tuple(members) for members in grouped.values()]


_UNUSED = "unused"


class SplitParams(StrictModel):
    """Every parameter of a split; recorded verbatim in the manifest."""

    sizes: tuple[int, int, int] = Field((210, 90, 600), description="Units in train, val, test.")
    unit: UnitKind = "video"
    sample: int | None = Field(None, ge=1, description="Stratified subsample of N units first.")
    min_val_per_class: int = Field(0, ge=0)
    exclude_task_types: tuple[str, ...] = ()
    seed: int = 0

    @model_validator(mode="after")
    def _sizes_non_negative(self) -> SplitParams:
        if any(size < 0 for size in self.sizes):
            raise ValueError(f"pool sizes must be >= 0, got {self.sizes}")
        if not any(self.sizes):
            raise ValueError("pool sizes are all 0: there is nothing to split")
        return self


@dataclass(frozen=True)
class Unit:
    id: str
    question_ids: tuple[str, ...]
    task_types: tuple[str, ...]  # one entry per question, in question order
    duration: str
    stratum: tuple[str, str]


@dataclass(frozen=True)
class Split:
    params: SplitParams
    pools: dict[str, tuple[Unit, ...]]  # train, val, test (in that order); units sorted by id
    unmet_min_val: tuple[str, ...]  # task types that could not reach min_val_per_class


def build_units(questions: Sequence[Question], unit: UnitKind, exclude: Sequence[str] = ()) -> list[Unit]:
    """Group questions into units and give each its stratum."""
    unknown = sorted(set(exclude) - {q.task_type for q in questions})
    if unknown:  # a misspelt exclusion would silently keep the class it meant to drop
        raise SplitError(f"--exclude-task-types names task types not in the questions: {', '.join(unknown)}")
    kept = [q for q in questions if q.task_type not in set(exclude)]
    frequency = Counter(q.task_type for q in kept)
    groups: dict[str, list[Question]] = defaultdict(list)
    for q in kept:
        groups[unit_id(q, unit)].append(q)
    units = []
    for key in sorted(groups):
        members = groups[key]
        durations = {q.duration for q in members}
        if len(durations) > 1:
            raise SplitError(
                f"video {key} has questions with different durations {sorted(durations)}", unit=key
            )
        rarest = min((q.task_type for q in members), key=lambda t: (frequency[t], t))
        units.append(
            Unit(
                key,
                tuple(q.question_id for q in members),
                tuple(q.task_type for q in members),
                members[0].duration,
                (members[0].duration, rarest),
            )
        )
    return units


def make_split(questions: Sequence[Question], params: SplitParams) -> Split:
    """Split ``questions`` into frozen pools according to ``params`` (deterministic)."""
    rng = random.Random(params.seed)
    units = build_units(questions, params.unit, params.exclude_task_types)
    if params.sample is not None:
        if params.sample > len(units):
            raise SplitError(
                f"--sample {params.sample} exceeds the {len(units)} available {params.unit} units"
            )
        units = _stratified_sample(units, params.sample, rng)
    wanted = sum(params.sizes)
    if wanted > len(units):
        # Named by the flags the user typed, so the message says which one to change.
        sizes = ",".join(map(str, params.sizes))
        source = f"--sample {params.sample} draws" if params.sample is not None else "the questions hold"
        raise SplitError(
            f"--sizes {sizes} needs {wanted} {params.unit} units, but {source} only {len(units)}",
            flag="--sizes",
        )
    assignment = _deal(units, dict(zip(Pool, params.sizes, strict=True)), rng)
    unmet: tuple[str, ...] = ()
    if params.min_val_per_class:
        unmet = _enforce_val_minimum(assignment, params.min_val_per_class, rng)
    pools = {
        name: tuple(sorted((u for u, p in assignment.items() if p == name), key=lambda u: u.id))
        for name in Pool
    }
    return Split(params, pools, unmet)


def _by_stratum(units: Sequence[Unit], rng: random.Random) -> dict[tuple[str, str], list[Unit]]:
    strata: dict[tuple[str, str], list[Unit]] = defaultdict(list)
    for unit in units:
        strata[unit.stratum].append(unit)
    for key in sorted(strata):
        rng.shuffle(strata[key])
    return strata


def _stratified_sample(units: Sequence[Unit], n: int, rng: random.Random) -> list[Unit]:
    strata = _by_stratum(units, rng)
    keys = sorted(strata)
    exact = {k: n * len(strata[k]) / len(units) for k in keys}
    take = {k: int(exact[k]) for k in keys}
    for k in sorted(keys, key=lambda k: (-(exact[k] - take[k]), k))[: n - sum(take.values())]:
        take[k] += 1
    return [u for k in keys for u in strata[k][: take[k]]]


def _deal(units: Sequence[Unit], sizes: dict[str, int], rng: random.Random) -> dict[Unit, str]:
    weights = {**sizes, _UNUSED: len(units) - sum(sizes.values())}
    strata = _by_stratum(units, rng)
    ordered = [u for key in sorted(strata) for u in strata[key]]
    total = len(ordered)
    current = dict.fromkeys(weights, 0)
    assignment: dict[Unit, str] = {}
    for unit in ordered:  # smooth weighted round-robin: exact totals, proportional spread
        for name, weight in weights.items():
            current[name] += weight
        pick = max(weights, key=lambda name: (current[name], -list(weights).index(name)))
        current[pick] -= total
        assignment[unit] = pick
    return assignment


def _val_counts(assignment: dict[Unit, str]) -> Counter[str]:
    return Counter(t for u, p in assignment.items() if p == Pool.VAL for t in u.task_types)


def _enforce_val_minimum(assignment: dict[Unit, str], k: int, rng: random.Random) -> tuple[str, ...]:
    all_types = sorted({t for u in assignment for t in u.task_types})
    unmet = []
    for task_type in sorted(all_types, key=lambda t: (sum(u.task_types.count(t) for u in assignment), t)):
        while _val_counts(assignment)[task_type] < k:
            if not _swap_into_val(assignment, task_type, k, rng):
                unmet.append(task_type)
                break
    return tuple(sorted(unmet))


def _swap_into_val(assignment: dict[Unit, str], task_type: str, k: int, rng: random.Random) -> bool:
    train_left = sum(u.task_types.count(task_type) for u, p in assignment.items() if p == Pool.TRAIN)
    donors = []
    for donor_pool in (Pool.TEST, _UNUSED, Pool.TRAIN):
        candidates = [u for u, p in assignment.items() if p == donor_pool and task_type in u.task_types]
        if donor_pool == Pool.TRAIN:
            candidates = [u for u in candidates if train_left - u.task_types.count(task_type) > 0]
        candidates.sort(key=lambda u: (-u.task_types.count(task_type), u.id))
        donors.extend(candidates)
    val_counts = _val_counts(assignment)
    for donor in donors:
        gain = Counter(donor.task_types)
        for leaving in sorted(
            (u for u, p in assignment.items() if p == Pool.VAL), key=lambda u: (len(u.task_types), u.id)
        ):
            if task_type in leaving.task_types:
                continue
            after = val_counts + gain
            after.subtract(Counter(leaving.task_types))
            if all(after[t] >= min(k, val_counts[t]) for t in leaving.task_types):
                assignment[leaving], assignment[donor] = assignment[donor], Pool.VAL
                return True
    return False


def count_table(split: Split, questions: Sequence[Question]) -> dict[str, dict[str, dict[str, int]]]:
    """Questions per pool × task type × duration."""
    by_id = {q.question_id: q for q in questions}
    table: dict[str, dict[str, dict[str, int]]] = {}
    for pool, units in split.pools.items():
        cells: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
        for unit in units:
            for qid in unit.question_ids:
                q = by_id[qid]
                cells[q.task_type][q.duration] += 1
        table[pool] = {t: dict(d) for t, d in sorted(cells.items())}
    return table
