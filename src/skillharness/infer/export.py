"""Export a run in the official Video-MME results format, for the linked ``eval_your_results.py``.

The layout is that of ``evaluation/output_test_template.json`` in ``MME-Benchmarks/Video-MME``
(last changed at ``e9f6a2d``, 2024-06-18): a list of videos, each with ``video_id``,
``duration``, ``domain``, ``sub_category`` and its ``questions`` (``question_id``, ``task_type``,
``question``, ``options``, ``answer``, ``response``). The script the README links
(``thanku-all/parse_answer`` ``eval_your_results.py``) reads ``duration``, ``domain``,
``sub_category``, ``questions`` and, per question, ``task_type``, ``answer`` and ``response``.
Each video also carries ``missing`` (true when none of its questions got a final answer), which
the script reads only when called with ``skip_missing=True``.

``response`` is the model's raw answer text (what the official extractor is meant to read), not
our normalized letter. One response per question: sample 0. An infra error exports as an empty
response, which the official rule drops, as it drops any unparsed answer. The script's command
line insists on all 300 videos of each duration; a subset is scored with its function and
``skip_missing=True``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from skillharness.agent import PredictionStatus
from skillharness.infer.scoring import ScoredAnswer
from skillharness.util.atomic import atomic_write_json

__all__ = ["is_official_export", "official_results", "write_official_results"]


def official_results(answers: Sequence[ScoredAnswer]) -> list[dict[str, Any]]:
    """The official results document for ``answers`` (sample 0 of each question), videos in id order."""
    videos: dict[str, dict[str, Any]] = {}
    for answer in sorted(answers, key=lambda a: (a.question.video_id, a.question.question_id)):
        if answer.sample_idx != 0:
            continue
        q = answer.question
        video = videos.setdefault(
            q.video_id,
            {
                "video_id": q.video_id,
                "duration": q.duration,
                "domain": q.domain,
                "sub_category": q.sub_category,
                "missing": True,
                "questions": [],
            },
        )
        final = answer.status is not PredictionStatus.INFRA_ERROR
        video["missing"] = video["missing"] and not final
        video["questions"].append(
            {
                "question_id": q.question_id,
                "task_type": q.task_type,
                "question": q.question,
                "options": list(q.options),
                "answer": q.answer,
                "response": answer.raw if final else "",
            }
        )
    return list(videos.values())


def write_official_results(path: Path, answers: Sequence[ScoredAnswer]) -> None:
    """Write :func:`official_results` to ``path`` atomically (UTF-8 JSON)."""
    atomic_write_json(path, official_results(answers))


def is_official_export(path: Path) -> bool:
    """Whether ``path`` holds an earlier export (every video with ``missing``, every question with a
    ``response``), which a new one may replace; a questions file in the same layout has neither.

    An empty list is never taken for one: ``all()`` over no video would claim a user's ``[]``,
    and a run's export holds the videos it asked about."""
    try:
        videos = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return False
    return (
        isinstance(videos, list)
        and bool(videos)
        and all(isinstance(v, dict) and "missing" in v for v in videos)
        and all(isinstance(q, dict) and "response" in q for v in videos for q in v.get("questions", ()))
    )
