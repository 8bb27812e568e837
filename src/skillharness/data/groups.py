"""Video-MME-v2's question groups and their non-linear group score.

Video-MME-v2 asks four questions per video, scored together: a group's score depends on which of
its questions are right, not only how many. A group is the questions of one video, in the order
of the number after their question id's last ``-`` (``"001-3"`` is third). Its ``group_type``
says how it is scored:

- ``relevance`` (capability consistency): by the number right, ``c``: ``c² / 16``
  (0, 1/16, 4/16, 9/16, 1).
- ``logic`` (reasoning coherence): by ``k``, the length of the run of right answers from the
  first question on, through the points of its ``group_structure``:

  - ``[1, 2, 3, 4]`` (a chain): 0, 1/16, 4/16, 9/16, 1;
  - ``[1, [2, 3], 4]`` (two parallel middle steps): 0, 1/12, 4/12, 7/12, 1, and a run that stops
    after question 1 counts 2 when question 3 is right;
  - ``[[1, 2], 3, 4]`` (two parallel first steps): 0, 1/10, 2/10, 5/10, 1, and a run of 0 counts
    1 when question 2 is right.

The score is a fraction (upstream reports it × 100). Checked against, at the pinned commits:
lmms-eval ``lmms_eval/tasks/videomme_v2/utils.py`` (``cal_relevance``, ``cal_logic``,
``_compute_all_subscores``) @ ``cb45ac4d``; ``MME-Benchmarks/Video-MME-v2``
``evaluation/test_video_mme_v2.py`` @ ``b24176a1``; VLMEvalKit ``vlmeval/dataset/videommev2.py``
@ ``e8e78f05`` (the same maps). Where they differ (lmms-eval groups by video and takes the type
of a group's first question, the other two group by file position and take its last) a load
refuses a video whose questions disagree, so every reading gives the same groups.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

__all__ = [
    "GROUP_SIZE",
    "GROUP_TYPES",
    "LOGIC_STRUCTURES",
    "GroupType",
    "check_group",
    "group_position",
    "group_problems",
    "group_score",
    "parse_structure",
]

GroupType = Literal["relevance", "logic"]
GROUP_TYPES: tuple[GroupType, ...] = ("relevance", "logic")
# Every group of the release holds four questions; the score maps have a point per count 0-4.
GROUP_SIZE = 4
_POSITION_RE = re.compile(r"-(\d+)$")

Structure = tuple[int | tuple[int, ...], ...]


@dataclass(frozen=True)
class _Logic:
    points: tuple[float, ...]  # by the length of the leading run of right answers, 0-4
    # (run, question index): a run of exactly ``run`` is lengthened by one when that (0-based)
    # question is right: a parallel step answered through its other branch.
    bridge: tuple[int, int] | None


_QUADRATIC = (0.0, 1 / 16, 4 / 16, 9 / 16, 1.0)
LOGIC_STRUCTURES: dict[Structure, _Logic] = {
    (1, 2, 3, 4): _Logic(_QUADRATIC, None),
    (1, (2, 3), 4): _Logic((0.0, 1 / 12, 4 / 12, 7 / 12, 1.0), (1, 2)),
    ((1, 2), 3, 4): _Logic((0.0, 1 / 10, 2 / 10, 5 / 10, 1.0), (0, 1)),
}


def _tuples(value: object) -> object:
    return tuple(_tuples(v) for v in value) if isinstance(value, list | tuple) else value


def parse_structure(text: str) -> Structure:
    """A logic group's structure from its text (``"[1, [2, 3], 4]"``); ValueError if unknown."""
    try:
        parsed = _tuples(ast.literal_eval(text.strip()))
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError) as exc:
        raise ValueError(f"group_structure {text!r} is not a literal list") from exc
    if parsed not in LOGIC_STRUCTURES:
        known = ", ".join(str(list(_lists(s))) for s in LOGIC_STRUCTURES)
        raise ValueError(f"group_structure {text!r} is none of the known logic structures ({known})")
    return parsed  # type: ignore[return-value]


def _lists(structure: Structure) -> list[object]:
    return [list(s) if isinstance(s, tuple) else s for s in structure]


def check_group(group_type: str | None, structure: str | None, question_id: str) -> None:
    """A question's group fields are usable: ValueError saying which one is not."""
    if group_type is None:
        if structure is not None:
            raise ValueError("group_structure is set without a group_type")
        return
    if group_type not in GROUP_TYPES:
        raise ValueError(f"group_type {group_type!r} is not one of {', '.join(GROUP_TYPES)}")
    if group_type == "logic":
        parse_structure(structure or "")
    if group_position(question_id) is None:
        raise ValueError(
            f"question_id {question_id!r} of a grouped question must end in '-<number>' "
            "(its place in its group)"
        )


def group_position(question_id: str) -> int | None:
    """A grouped question's place in its group: the number after its id's last ``-``."""
    match = _POSITION_RE.search(question_id)
    return int(match.group(1)) if match else None


def group_score(group_type: str, structure: str | None, right: Sequence[bool]) -> float:
    """The score (0-1) of one complete group whose answers, in order, are ``right``."""
    if len(right) != GROUP_SIZE:
        raise ValueError(f"a group holds {GROUP_SIZE} questions, got {len(right)}")
    if group_type == "relevance":
        return _QUADRATIC[sum(right)]
    if group_type != "logic":
        raise ValueError(f"group_type {group_type!r} is not one of {', '.join(GROUP_TYPES)}")
    logic = LOGIC_STRUCTURES[parse_structure(structure or "")]
    run = next((i for i, ok in enumerate(right) if not ok), len(right))
    if logic.bridge is not None and run == logic.bridge[0] and right[logic.bridge[1]]:
        run += 1
    return logic.points[run]


class _Grouped(Protocol):
    @property
    def video_id(self) -> str: ...
    @property
    def question_id(self) -> str: ...
    @property
    def group_type(self) -> str | None: ...
    @property
    def group_structure(self) -> str | None: ...


def group_problems(questions: Iterable[_Grouped]) -> list[str]:
    """Problems of a file's groups: a video whose questions disagree on their group's type or
    structure, or share a place in it (each reference would read such a group differently)."""
    by_video: dict[str, list[_Grouped]] = defaultdict(list)
    for q in questions:
        by_video[q.video_id].append(q)
    problems = []
    for video, members in by_video.items():
        if all(q.group_type is None for q in members):
            continue
        kinds = {(q.group_type, q.group_structure) for q in members}
        if len(kinds) > 1:
            shown = "; ".join(f"{q.question_id}: {q.group_type} {q.group_structure}" for q in members)
            problems.append(f"video {video!r}: its questions disagree on their group ({shown})")
        places = [group_position(q.question_id) for q in members]
        if len(set(places)) != len(places):
            ids = ", ".join(q.question_id for q in members)
            problems.append(f"video {video!r}: two grouped questions share a place in its group ({ids})")
    return problems
