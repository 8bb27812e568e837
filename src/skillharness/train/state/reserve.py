"""The val reserve: a share of the val videos that no gate or guard draws (``train.gate.reserve``).

On the reserved questions the end of training compares the final bundle with the baseline as on
questions of the class that no decision saw, so the val gain's optimism can be estimated from the
run's own data (``train/validate/unselected.py``). Whole videos are reserved, since a video's
questions move together. The choice is a pure function of the video ids (the smallest SHA-256 of
each id first), so preflight, ``split verify``, ``experiment init`` and the loop count the same
questions without sharing any state.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from skillharness.data import Question

__all__ = ["reserved_ids"]


def reserved_ids(val: Iterable[Question], share: float) -> frozenset[str]:
    """The question ids of the ``share`` of val videos (rounded down) held out of every gate."""
    questions = list(val)
    videos = sorted({q.video_id for q in questions}, key=lambda v: hashlib.sha256(v.encode()).hexdigest())
    kept = set(videos[: int(share * len(videos))])
    return frozenset(q.question_id for q in questions if q.video_id in kept)
