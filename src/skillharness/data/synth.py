"""A synthetic Video-MME-style benchmark: real mp4 files, ``.srt`` narration, and questions whose
answers the generator knows.

Output folder layout::

    questions.json      Video-MME layout (video_id, duration, domain, sub_category, url, videoID,
                        question_id, task_type, question, options ["A. ...", ...], answer)
    videos/<videoID>.mp4
    subtitles/<videoID>.srt   (about 60 % of videos; the rest have none, as in Video-MME)
    truth.json          per question: the generator's facts, answer text and evidence interval
    scenes.json         per video: the full scene (objects, captions, backgrounds)
    manifest.json       seed, version, counts per task type and duration

Duration labels are scaled down but keep their names: short < 15 s, medium 15-35 s, long > 35 s.
Three task types are deliberately micro-sized (about 4 questions each of 108), like the real data.
Everything is a pure function of (seed, number of videos); each video has its own RNG stream, so
videos can be generated in parallel and still come out byte-identical.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import random
import shutil
import uuid
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from skillharness.data.adapter import Adapter, load_adapter
from skillharness.data.questions import OPTION_LETTERS, Question, TaskType
from skillharness.data.synth_distractors import VIDEO_MME_SHAPE, SynthShape, widen_options
from skillharness.data.synth_layout import BASE_LAYOUT, layout_shape, write_layout
from skillharness.data.synth_questions import GENERATORS, Draft
from skillharness.data.synth_render import narration_cues, srt_text, write_mp4
from skillharness.data.synth_scene import Scene, make_scene
from skillharness.errors import DataError
from skillharness.util.atomic import atomic_write_json, atomic_write_text

__all__ = [
    "DEFAULT_SEED",
    "DEFAULT_VIDEOS",
    "MICRO_TASK_TYPES",
    "ensure_synthetic_benchmark",
    "generate_benchmark",
    "plan_task_types",
]

SYNTH_VERSION = 1
DEFAULT_VIDEOS = 36
DEFAULT_SEED = 0
QUESTIONS_PER_VIDEO = 3
MICRO_TASK_TYPES = (TaskType.TEMPORAL_PERCEPTION, TaskType.SPATIAL_PERCEPTION, TaskType.SPATIAL_REASONING)
_LABELS = ("short", "medium", "long")
_MAX_SCENE_ATTEMPTS = 200


def plan_task_types(videos: int, per_video: int = QUESTIONS_PER_VIDEO) -> list[list[str]]:
    """``per_video`` distinct task types per video: micro types get ~1/27 of the slots each, the
    rest share."""
    slots = videos * per_video
    micro = max(1, round(slots * 4 / 108)) if slots >= len(TaskType) else 0
    common = [t.value for t in TaskType if t not in MICRO_TASK_TYPES]
    rest = slots - micro * len(MICRO_TASK_TYPES)
    counts = {t: rest // len(common) + (i < rest % len(common)) for i, t in enumerate(common)}
    counts.update({t.value: micro for t in MICRO_TASK_TYPES})
    sequence = [t for t, n in counts.items() for _ in range(n)]
    # Slot j goes to video j % videos: a type's consecutive slots land on different videos.
    plan: list[list[str]] = [[] for _ in range(videos)]
    for j, task_type in enumerate(sequence):
        plan[j % videos].append(task_type)
    return plan


def _video_key(seed: int, index: int) -> str:
    return f"syn{seed}-{index + 1:03d}"


def _letter_options(draft: Draft, rng: random.Random) -> tuple[list[str], str] | None:
    options = list(draft.ordered) if draft.ordered else [draft.correct, *draft.distractors]
    if not draft.ordered:
        rng.shuffle(options)
    if len(options) != 4 or len(set(options)) != 4 or draft.correct not in options:
        return None
    letters = OPTION_LETTERS[: len(options)]  # four here: the synthetic benchmark is Video-MME-shaped
    return [f"{letters[i]}. {text}" for i, text in enumerate(options)], letters[options.index(draft.correct)]


def _plan_video(
    seed: int, index: int, task_types: list[str], shape: SynthShape = VIDEO_MME_SHAPE
) -> tuple[Scene, list[tuple[Draft, list[str], str]]]:
    rng = random.Random(f"skillharness-synth:{SYNTH_VERSION}:{seed}:{index}")
    label = _LABELS[index % len(_LABELS)]
    subtitles = rng.random() < 0.6
    for _ in range(_MAX_SCENE_ATTEMPTS):
        scene = make_scene(rng, f"{index + 1:03d}", _video_key(seed, index), label, subtitles)
        items = []
        for task_type in task_types:
            draft = GENERATORS[task_type](scene, rng)
            lettered = _letter_options(draft, rng) if draft else None
            if draft is None or lettered is None:
                break
            items.append((draft, *lettered))
        if len(items) == len(task_types):
            # Widened (or narrowed) after the scene is fixed, with its own random stream: the
            # four-option benchmark draws exactly what it always drew.
            return scene, [widen_options(scene, seed, index, k, item, shape) for k, item in enumerate(items)]
    raise DataError(f"synthetic video {index + 1}: no scene supports {task_types} (generator bug)")


def _build_video(
    out: Path, seed: int, index: int, task_types: list[str], shape: SynthShape = VIDEO_MME_SHAPE
) -> dict[str, Any]:
    """Generate one video's files; return its question rows, truth records and scene."""
    scene, items = _plan_video(seed, index, task_types, shape)
    pad = shape.pad_s if shape.padded(index) else 0.0
    write_mp4(scene, out / "videos" / f"{scene.video_key}.mp4", lead_s=pad, tail_s=pad)
    if scene.has_subtitles and not pad:  # a padded file's clock is not the scene's: no narration
        (out / "subtitles" / f"{scene.video_key}.srt").write_text(srt_text(scene), encoding="utf-8")
    rows, truth = [], {}
    for k, ((draft, options, answer), task_type) in enumerate(zip(items, task_types, strict=True), start=1):
        row = {
            "video_id": scene.video_id,
            "duration": scene.duration_label,
            "domain": "Synthetic",
            "sub_category": "Moving Shapes",
            "url": f"synthetic://{scene.video_key}",
            "videoID": scene.video_key,
            "question_id": f"{scene.video_id}-{k}",
            "task_type": task_type,
            "question": draft.question,
            "options": options,
            "answer": answer,
        }
        if pad:  # the scene sits inside a longer file: the question is about its window only
            row.update(clip_start=pad, clip_end=pad + scene.duration_s)
        Question(**row)  # a row we cannot load is a generator bug: fail here, not in a user's run
        rows.append(row)
        truth[row["question_id"]] = {
            "video_id": scene.video_id,
            "videoID": scene.video_key,
            "task_type": task_type,
            "kind": draft.kind,
            "answer": answer,
            "answer_text": draft.correct,
            "facts": draft.facts,
            "evidence_s": list(draft.evidence_s),
        }
    cues = narration_cues(scene) if scene.has_subtitles and not pad else []
    return {"rows": rows, "truth": truth, "scene": scene.to_json(), "cues": cues}


def _generate_into(out: Path, videos: int, seed: int, workers: int, layout: Adapter | None = None) -> None:
    """The benchmark into ``out``: in Video-MME's layout, or (``layout``) in that adapter's."""
    shape = layout_shape(layout) if layout is not None else VIDEO_MME_SHAPE
    (out / "videos").mkdir(parents=True)
    (out / "subtitles").mkdir()
    plan = plan_task_types(videos, shape.per_video)
    args = [(out, seed, i, plan[i], shape) for i in range(videos)]
    if workers > 1 and videos > 1:
        # forkserver, as the decode pool: a fork of a process with threads (a test session, an
        # app) can copy a lock another thread holds, and the worker then waits on it forever.
        context = multiprocessing.get_context("forkserver")
        with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
            results = list(pool.map(_build_video, *zip(*args, strict=True)))
    else:
        results = [_build_video(*a) for a in args]
    rows = [row for r in results for row in r["rows"]]
    truth = {qid: rec for r in results for qid, rec in r["truth"].items()}
    scenes = {r["scene"]["video_key"]: r["scene"] for r in results}
    manifest: dict[str, Any] = {
        "generator": "skillharness synthetic benchmark",
        "version": SYNTH_VERSION,
        "seed": seed,
        "videos": videos,
        "questions": len(rows),
        "task_types": dict(Counter(r["task_type"] for r in rows)),
        "durations": dict(Counter(r["duration"] for r in rows)),
        "videos_with_subtitles": sum(1 for s in scenes.values() if s["has_subtitles"]),
    }
    if layout is not None:
        cues = {r["scene"]["video_key"]: r["cues"] for r in results}
        written = write_layout(out, layout, rows, truth, cues)
        rows, truth = written.rows, written.truth
        manifest.update(written.manifest)
    else:
        atomic_write_text(out / "questions.json", json.dumps(rows, indent=1, ensure_ascii=False) + "\n")
    atomic_write_json(out / "truth.json", truth)
    atomic_write_json(out / "scenes.json", scenes)
    atomic_write_json(out / "manifest.json", manifest)


def _default_workers() -> int:
    return max(1, min(2, os.cpu_count() or 1))


def generate_benchmark(
    out: Path,
    videos: int = DEFAULT_VIDEOS,
    seed: int = DEFAULT_SEED,
    *,
    force: bool = False,
    workers: int | None = None,
    layout: str = BASE_LAYOUT,
) -> Path:
    """Generate the benchmark into ``out`` (built in a temp folder, then renamed into place), in
    the file layout of the built-in adapter (or adapter file) ``layout``.

    Raises:
        DataError: ``out`` exists and is not empty (without ``force``), or ``videos < 1``.
    """
    out = Path(out)
    adapter = load_adapter(layout)  # an unknown layout stops here, before anything is written
    if videos < 1:
        raise DataError(f"--videos must be at least 1, got {videos}")
    if out.exists() and not out.is_dir():
        raise DataError(f"{out} exists and is not a folder", file=str(out))
    if out.exists() and any(out.iterdir()) and not force:
        raise DataError(f"{out} exists and is not empty; pass --force to replace it", file=str(out))
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.parent / f".{out.name}.tmp-{uuid.uuid4().hex[:8]}"
    try:
        written_as = None if adapter.name == BASE_LAYOUT else adapter
        _generate_into(tmp, videos, seed, workers or _default_workers(), written_as)
        if out.exists():
            old = out.parent / f".{out.name}.old-{uuid.uuid4().hex[:8]}"
            out.rename(old)
            shutil.rmtree(old)
        tmp.rename(out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def ensure_synthetic_benchmark(
    cache_dir: Path, seed: int = DEFAULT_SEED, videos: int = DEFAULT_VIDEOS, layout: str = BASE_LAYOUT
) -> Path:
    """The benchmark for (seed, videos, layout) under ``cache_dir``, generated on first use.

    Safe under concurrency: each caller builds in its own temp folder and the first rename wins.
    """
    adapter = load_adapter(layout)
    suffix = "" if adapter.name == BASE_LAYOUT else f"-{adapter.name}"
    target = Path(cache_dir) / f"synth-v{SYNTH_VERSION}-seed{seed}-n{videos}{suffix}"
    if (target / "manifest.json").is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.parent / f".{target.name}.tmp-{uuid.uuid4().hex[:8]}"
    try:
        _generate_into(tmp, videos, seed, _default_workers(), adapter if suffix else None)
        try:
            tmp.rename(target)
        except OSError:
            if not (target / "manifest.json").is_file():  # not a lost race: a real failure
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target
