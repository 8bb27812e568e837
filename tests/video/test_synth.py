"""The synthetic benchmark: valid Video-MME rows, full coverage, answers that match the video."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from skillharness.data.loader import load_questions
from skillharness.data.questions import Question, TaskType
from skillharness.data.synth import (
    MICRO_TASK_TYPES,
    ensure_synthetic_benchmark,
    generate_benchmark,
    plan_task_types,
)
from skillharness.data.synth_scene import BACKGROUNDS, COLOURS
from skillharness.errors import DataError
from skillharness.util.atomic import sha256_file
from skillharness.video import load_subtitles, video_duration
from skillharness.video._decode import decode_at


def _load(synth_root: Path, name: str) -> Any:
    return json.loads((synth_root / name).read_text(encoding="utf-8"))


def test_every_row_passes_question_validation_and_the_loader(synth_root: Path) -> None:
    rows = _load(synth_root, "questions.json")
    assert len(rows) == 108
    for row in rows:
        assert list(row) == [
            "video_id",
            "duration",
            "domain",
            "sub_category",
            "url",
            "videoID",
            "question_id",
            "task_type",
            "question",
            "options",
            "answer",
        ]
        Question(**row)
        assert [o[:3] for o in row["options"]] == ["A. ", "B. ", "C. ", "D. "]
        assert len(set(row["options"])) == 4
    assert [q.question_id for q in load_questions(synth_root / "questions.json")] == [
        r["question_id"] for r in rows
    ]


def test_covers_all_task_types_and_durations_with_micro_classes(synth_root: Path) -> None:
    rows = _load(synth_root, "questions.json")
    per_type: dict[str, int] = {}
    for row in rows:
        per_type[row["task_type"]] = per_type.get(row["task_type"], 0) + 1
    assert set(per_type) == {t.value for t in TaskType}
    assert {row["duration"] for row in rows} == {"short", "medium", "long"}
    for task_type, n in per_type.items():
        if task_type in MICRO_TASK_TYPES:
            assert 3 <= n <= 5, task_type
        else:
            assert n >= 8, task_type
    for video_rows in _by_video(rows).values():
        assert len({r["task_type"] for r in video_rows}) == 3  # three different kinds per video


def _by_video(rows: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        out.setdefault(row["videoID"], []).append(row)
    return out


@pytest.mark.parametrize("videos", [1, 2, 4, 10, 36, 100])
def test_task_plan_gives_three_distinct_types_per_video(videos: int) -> None:
    plan = plan_task_types(videos)
    assert len(plan) == videos
    assert all(len(set(types)) == 3 == len(types) for types in plan)
    if videos >= 4:
        assert {t for types in plan for t in types} == {t.value for t in TaskType}


def test_files_exist_and_durations_match_their_labels(synth_root: Path) -> None:
    scenes = _load(synth_root, "scenes.json")
    limits = {"short": (0, 15), "medium": (15, 35), "long": (35, 61)}
    for key, scene in scenes.items():
        low, high = limits[scene["duration_label"]]
        assert low <= scene["duration_s"] < high
        assert video_duration(synth_root / "videos" / f"{key}.mp4") == pytest.approx(
            scene["duration_s"], abs=0.05
        )
        srt = synth_root / "subtitles" / f"{key}.srt"
        assert srt.is_file() == scene["has_subtitles"]
    with_subs = sum(s["has_subtitles"] for s in scenes.values())
    assert 0 < with_subs < len(scenes)


def test_subtitles_use_videomme_font_wrappers_and_load_clean(synth_root: Path) -> None:
    srt = sorted((synth_root / "subtitles").glob("*.srt"))[0]
    assert '<font color="white"' in srt.read_text(encoding="utf-8")
    lines = load_subtitles(srt).lines
    assert lines
    assert all("<" not in line.text and line.text.endswith((".", "?")) for line in lines)


def _option_text(row: dict[str, Any]) -> str:
    return row["options"]["ABCD".index(row["answer"])][3:]


def _objects(scene: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f"{o['colour']} {o['shape']}": o for o in scene["objects"]}


def _check_truth(
    kind: str, facts: dict[str, Any], answer: str, scene: dict[str, Any], row: dict[str, Any]
) -> None:
    objects = _objects(scene)
    if kind == "count_shape":
        assert answer == str(sum(o["shape"] == facts["shape"] for o in scene["objects"]))
    elif kind == "caption_word":
        assert answer == scene["captions"][facts["index"]]["word"]
    elif kind == "first_colour":
        first = min(
            (o for o in scene["objects"] if o["shape"] == facts["shape"]), key=lambda o: o["appear_s"]
        )
        assert answer == first["colour"].capitalize()
    elif kind == "shape_present":
        shapes = {o["shape"] for o in scene["objects"]}
        assert [o[5:] in shapes for o in row["options"]].count(True) == 1
        assert answer[2:] in shapes
    elif kind == "motion":
        assert answer == f"It {objects[facts['object']]['motion']}."
    elif kind == "appear_quarter":
        quarter_len = scene["duration_s"] / 4
        appear = objects[facts["object"]]["appear_s"]
        assert answer.endswith(("first", "second", "third", "last")[int(appear // quarter_len)] + " quarter")
        assert min(abs(appear - k * quarter_len) for k in range(1, 4)) >= 0.3  # no borderline cases
    elif kind == "quadrant":
        x, y = objects[facts["object"]]["start_xy"]
        assert answer == f"{'Top' if y < 60 else 'Bottom'} {'left' if x < 96 else 'right'}"
    elif kind == "relative_position":
        (ax, ay), (bx, by) = objects[facts["a"]]["start_xy"], objects[facts["b"]]["start_xy"]
        if ay == by:
            assert answer == ("To the left of it" if ax < bx else "To the right of it")
        else:
            assert answer == ("Above it" if ay < by else "Below it")
        a, b = objects[facts["a"]], objects[facts["b"]]
        assert min(a["vanish_s"], b["vanish_s"]) - max(a["appear_s"], b["appear_s"]) >= 1.5
    elif kind == "appear_order":
        order = sorted(facts["order"], key=lambda name: objects[name]["appear_s"])
        assert answer == ", then ".join(f"the {n}" for n in order).capitalize() + "."
    elif kind == "heading_edge":
        (x0, y0), (x1, y1) = objects[facts["object"]]["start_xy"], objects[facts["object"]]["end_xy"]
        edge = "right" if x1 > x0 else "left" if x1 < x0 else "bottom" if y1 > y0 else "top"
        assert answer == f"The {edge} edge"
    elif kind == "seen_with_word":
        caption = next(c for c in scene["captions"] if c["word"] == facts["word"])
        for option in row["options"]:
            name = option[7:]  # "A. The red circle"
            obj = objects.get(name)
            overlap = obj is not None and min(obj["vanish_s"], caption["end_s"]) > max(
                obj["appear_s"], caption["start_s"]
            )
            assert overlap == (option[3:] == answer), option
    elif kind == "summary":
        assert answer.startswith(f"{len(scene['objects'])} coloured shapes")
        assert all(name in answer for _, name in scene["backgrounds"])
        assert all(c["word"] in answer for c in scene["captions"])
    else:
        pytest.fail(f"unknown kind {kind}")


def test_every_answer_matches_the_generators_ground_truth(synth_root: Path) -> None:
    rows = {r["question_id"]: r for r in _load(synth_root, "questions.json")}
    truth, scenes = _load(synth_root, "truth.json"), _load(synth_root, "scenes.json")
    assert set(truth) == set(rows)
    kinds = set()
    for qid, record in truth.items():
        row = rows[qid]
        assert record["answer"] == row["answer"]
        assert record["answer_text"] == _option_text(row)
        assert record["task_type"] == row["task_type"]
        scene = scenes[row["videoID"]]
        start, end = record["evidence_s"]
        assert 0 <= start <= end <= scene["duration_s"] + 1
        _check_truth(record["kind"], record["facts"], record["answer_text"], scene, row)
        kinds.add(record["kind"])
    assert len(kinds) == 12


def _close(pixel: Any, rgb: tuple[int, int, int], tolerance: int = 40) -> bool:
    return max(abs(int(p) - c) for p, c in zip(pixel, rgb, strict=True)) <= tolerance


def test_the_video_pixels_show_the_ground_truth(synth_root: Path) -> None:
    """Decode each object's mid-visibility frame: its colour is where the scene says it is."""
    scenes = _load(synth_root, "scenes.json")
    for key, scene in list(scenes.items())[:18]:
        times, checks = [], []
        for obj in scene["objects"]:
            t = round((obj["appear_s"] + obj["vanish_s"]) / 2, 1)
            times.append(t)
            checks.append(obj)
        frames = decode_at(synth_root / "videos" / f"{key}.mp4", times)
        for t, obj, frame in zip(times, checks, frames, strict=True):
            assert frame is not None
            k = min(max((frame.pts_s - obj["appear_s"]) / (obj["vanish_s"] - obj["appear_s"]), 0), 1)
            x = obj["start_xy"][0] + k * (obj["end_xy"][0] - obj["start_xy"][0])
            y = obj["start_xy"][1] + k * (obj["end_xy"][1] - obj["start_xy"][1])
            assert _close(frame.rgb[round(y), round(x)], COLOURS[obj["colour"]]), (key, obj, t)
            background = [name for start, name in scene["backgrounds"] if start <= frame.pts_s][-1]
            assert _close(frame.rgb[3, 3], BACKGROUNDS[background], 24), (key, t)


def test_same_seed_same_bytes_serial_or_parallel(tmp_path: Path) -> None:
    a = generate_benchmark(tmp_path / "a", videos=4, seed=5, workers=1)
    b = generate_benchmark(tmp_path / "b", videos=4, seed=5, workers=2)
    files_a = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    assert files_a == sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    assert [f for f in files_a if sha256_file(a / f) != sha256_file(b / f)] == []
    c = generate_benchmark(tmp_path / "c", videos=4, seed=6, workers=1)
    assert (c / "questions.json").read_text() != re.sub("syn5-", "syn6-", (a / "questions.json").read_text())


_ENCODE_ONE = """
import sys
from pathlib import Path
from skillharness.data.synth import _plan_video, plan_task_types
from skillharness.data.synth_distractors import VIDEO_MME_SHAPE
from skillharness.data.synth_render import write_mp4
scene, _ = _plan_video(5, 2, plan_task_types(4, VIDEO_MME_SHAPE.per_video)[2], VIDEO_MME_SHAPE)
write_mp4(scene, Path(sys.argv[1]))
"""


def test_encoding_reads_no_memory_it_did_not_write(tmp_path: Path) -> None:
    """glibc fills fresh allocations with MALLOC_PERTURB_'s byte: if the encoder read memory it
    never wrote, two fills would give two files (x264's macroblock tree did, about one encode in
    300 in a long-lived process; a loaded test run once saw it)."""
    digests = []
    for fill in ("1", "170"):
        path = tmp_path / f"perturb-{fill}.mp4"
        env = {**os.environ, "MALLOC_PERTURB_": fill}
        subprocess.run([sys.executable, "-c", _ENCODE_ONE, str(path)], env=env, check=True, timeout=120)
        digests.append(sha256_file(path))
    assert digests[0] == digests[1]


def test_existing_output_is_not_replaced_without_force(tmp_path: Path) -> None:
    out = generate_benchmark(tmp_path / "out", videos=1, seed=1, workers=1)
    with pytest.raises(DataError, match="--force"):
        generate_benchmark(out, videos=1, seed=2, workers=1)
    assert json.loads((out / "manifest.json").read_text())["seed"] == 1
    generate_benchmark(out, videos=1, seed=2, workers=1, force=True)
    assert json.loads((out / "manifest.json").read_text())["seed"] == 2
    assert [p.name for p in tmp_path.iterdir()] == ["out"]  # no temp or backup folders left


def test_ensure_generates_once_and_reuses(synth_root: Path) -> None:
    stamp = (synth_root / "manifest.json").stat().st_mtime_ns
    assert ensure_synthetic_benchmark(synth_root.parent) == synth_root
    assert (synth_root / "manifest.json").stat().st_mtime_ns == stamp
    assert [p.name for p in synth_root.parent.iterdir()] == [synth_root.name]
