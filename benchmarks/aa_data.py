"""The A/A check's data: real Video-MME questions of one class, placeholder videos, a split, the bundle.

The agent runs text only (``agent.vision: false``, no subtitles), so a video is read for its
duration alone: each question's video is a 60-second grey placeholder written with PyAV, and the
prompt says "Video duration: 60.0s" for every question (the real videos are not on this machine).
The questions are a seeded choice of the class's videos, all their questions of that class.
"""

from __future__ import annotations

import json
import os
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import av
import numpy as np

from skillharness.data import load_questions
from skillharness.data.pools import write_split
from skillharness.data.split import SplitParams, make_split
from skillharness.skills import initial_bundle

QUESTIONS = Path(
    os.environ.get("SKILLHARNESS_VIDEOMME_QUESTIONS", "/work/shared/data/videomme/videomme_questions.json")
)
TASK_TYPE = "Counting Problem"
SEED = 20260730
TRAIN_VIDEOS = 4  # the loop opens a train pool; the gates never draw from it
VAL_VIDEOS = 24
PLACEHOLDER_S = 60
MIN_VAL = 20  # train.gate.min_distinct: fewer val questions would make the class micro


@dataclass(frozen=True)
class AAData:
    questions: Path
    pools: Path
    videos: Path
    bundle: Path
    summary: dict[str, Any]


def placeholder_video(path: Path, seconds: int = PLACEHOLDER_S) -> None:
    """A grey 32x32 H.264 file at 1 fps."""
    with av.open(str(path), "w", options={"movflags": "+faststart"}) as container:
        stream = container.add_stream("libx264", rate=1)
        stream.width, stream.height, stream.pix_fmt = 32, 32, "yuv420p"
        grey = np.full((32, 32, 3), 128, dtype=np.uint8)
        for _ in range(seconds):
            for packet in stream.encode(av.VideoFrame.from_ndarray(grey, format="rgb24")):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)


def _chosen_rows() -> tuple[list[str], list[dict[str, Any]]]:
    by_video: dict[str, list[dict[str, Any]]] = {}
    for row in json.loads(QUESTIONS.read_text()):
        if row["task_type"] == TASK_TYPE:
            by_video.setdefault(row["videoID"], []).append(row)
    chosen = random.Random(SEED).sample(sorted(by_video), TRAIN_VIDEOS + VAL_VIDEOS)
    return chosen, [row for video in chosen for row in by_video[video]]


def prepare(folder: Path) -> AAData:
    """Write (or reuse) the questions file, placeholder videos, split and initial bundle under ``folder``."""
    chosen, rows = _chosen_rows()
    folder.mkdir(parents=True, exist_ok=True)
    questions_path = folder / "questions.json"
    questions_path.write_text(json.dumps(rows, indent=1))
    videos = folder / "videos"
    videos.mkdir(exist_ok=True)
    for video in chosen:
        if not (videos / f"{video}.mp4").exists():
            placeholder_video(videos / f"{video}.mp4")
    questions = load_questions(questions_path)
    params = SplitParams(sizes=(TRAIN_VIDEOS, VAL_VIDEOS, 0), unit="video", seed=SEED)
    written = write_split(
        make_split(questions, params), questions, questions_path, folder / "split", force=True, version="aa"
    )
    val = json.loads(written.pools_path.read_text())["pools"]["val"]["question_ids"]
    if len(val) < MIN_VAL:
        raise ValueError(
            f"{len(val)} val questions of {TASK_TYPE}: fewer than {MIN_VAL} make the class micro"
        )
    initial_bundle().save(folder / "bundle")
    summary = {
        "file": str(QUESTIONS),
        "task_type": TASK_TYPE,
        "videos": len(chosen),
        "val_questions": len(val),
        "val_ids": sorted(val),
    }
    return AAData(questions_path, written.pools_path, videos, folder / "bundle", summary)
