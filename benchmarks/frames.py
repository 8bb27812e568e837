"""Frame sampling benchmark: 32 uniform frames from a 20-minute 360p H.264 video.

Times three ways of getting the same 32 JPEG frames, pinned to one CPU core:

- seek-based (what the agent uses): seek to the keyframe before each target, decode forward;
- decode-all (the naive way): decode every frame in order and keep the 32;
- cache hit: the same request again, answered from the on-disk frame cache.

The test video (20 min, 640x360, 30 fps, a keyframe every 5 s) is generated once with PyAV and
kept under ``~/.cache/skillharness-bench/``; generating it takes a few minutes.

Run: ``.venv/bin/python benchmarks/frames.py`` (``--no-docs`` to skip updating docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import av
import numpy as np
from PIL import Image

from skillharness.video import FrameCache, FrameSampler, FramesConfig, decoder_stats, uniform_timestamps
from skillharness.video._decode import decode_all_at
from skillharness.video.frames import encode_jpeg

MINUTES, FPS, WIDTH, HEIGHT, KEYFRAME_S, COUNT = 20, 30, 640, 360, 5, 32
BENCH_DIR = Path.home() / ".cache" / "skillharness-bench"
DOCS = Path(__file__).resolve().parents[1] / "docs" / "benchmarks.md"


class _NoiseContent:
    """Hard case: a moving gradient under scrolling noise. Noise defeats prediction, so x264 uses
    no B-frames and every frame before a target must be decoded."""

    def __init__(self) -> None:
        self.texture = np.random.default_rng(0).normal(0, 12, (HEIGHT, WIDTH, 3)).astype(np.float32)
        self.x = np.arange(WIDTH, dtype=np.float32)[None, :]
        self.y = np.arange(HEIGHT, dtype=np.float32)[:, None]

    def __call__(self, index: int) -> np.ndarray:
        t = index / FPS
        base = 128 + 60 * np.sin(self.x / 50 + t) + 40 * np.cos(self.y / 35 - 0.7 * t)
        rolled = np.roll(self.texture, (index * 3) % WIDTH, axis=1)
        frame = np.clip(base[..., None] + rolled, 0, 255).astype(np.uint8)
        _box(frame, index)
        return frame


class _NaturalContent:
    """Camera-like case: a slow pan over a detailed still scene, a moving object, a cut every 20 s.
    Predictable motion, so x264 uses B-frames, as in ordinary recorded video."""

    def __init__(self) -> None:
        self.world_id = -1
        self.world = np.zeros((HEIGHT * 2, WIDTH * 2, 3), np.uint8)

    def _make_world(self, world_id: int) -> None:
        rng = np.random.default_rng(world_id)
        coarse = Image.fromarray(rng.integers(0, 256, (HEIGHT // 20, WIDTH // 20, 3), dtype=np.uint8))
        smooth = np.asarray(coarse.resize((WIDTH * 2, HEIGHT * 2), Image.Resampling.BICUBIC), dtype=np.int16)
        detail = rng.normal(0, 10, smooth.shape)
        self.world = np.clip(smooth + detail, 0, 255).astype(np.uint8)
        self.world_id = world_id

    def __call__(self, index: int) -> np.ndarray:
        t = index / FPS
        if int(t // 20) != self.world_id:
            self._make_world(int(t // 20))
        local = t % 20
        x0 = int(local * 30)  # 30 px/s pan, 600 px per scene
        y0 = int(HEIGHT / 2 + HEIGHT / 3 * np.sin(local / 4))
        frame = self.world[y0 : y0 + HEIGHT, x0 : x0 + WIDTH].copy()
        _box(frame, index)
        return frame


def _box(frame: np.ndarray, index: int) -> None:
    t = index / FPS
    bx = int((WIDTH - 80) * (0.5 + 0.5 * np.sin(t / 3)))
    by = int((HEIGHT - 60) * (0.5 + 0.5 * np.cos(t / 4)))
    frame[by : by + 60, bx : bx + 80] = (200, 40 + int(40 * np.sin(t)), 90)


CONTENTS: dict[str, Callable[[], Callable[[int], np.ndarray]]] = {
    "natural": _NaturalContent,
    "noise": _NoiseContent,
}


def make_video(path: Path, content: str) -> Path:
    """Generate a 20-minute test video once (renamed into place, so a killed run leaves no half file)."""
    if path.is_file():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.mp4")
    picture = CONTENTS[content]()
    gop = FPS * KEYFRAME_S
    started = time.perf_counter()
    with av.open(str(tmp), "w", format="mp4", container_options={"movflags": "+faststart"}) as out:
        stream = out.add_stream("libx264", rate=FPS)
        stream.width, stream.height, stream.pix_fmt = WIDTH, HEIGHT, "yuv420p"
        stream.options = {
            "preset": "veryfast",
            "crf": "26",
            "x264-params": f"keyint={gop}:min-keyint={gop}:scenecut=0",
        }
        for index in range(MINUTES * 60 * FPS):
            for packet in stream.encode(av.VideoFrame.from_ndarray(picture(index), format="rgb24")):
                out.mux(packet)
            if index % (FPS * 60) == 0:
                print(f"  generating {content}: minute {index // (FPS * 60)} of {MINUTES}", flush=True)
        for packet in stream.encode():
            out.mux(packet)
    tmp.rename(path)
    print(f"  generated {path} in {time.perf_counter() - started:.0f} s")
    return path


def _timed(call: Callable[[], object], repeat: int) -> tuple[float, float]:
    """(median, min) wall seconds over ``repeat`` runs."""
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        call()
        times.append(time.perf_counter() - started)
    return statistics.median(times), min(times)


def run(video: Path) -> dict[str, Any]:
    duration = FrameSampler(FramesConfig(cache_enabled=False)).duration(video)
    timestamps = uniform_timestamps(duration, COUNT)
    config = FramesConfig(cache_enabled=False)  # default longest side 448 and quality 85
    seek_sampler = FrameSampler(config)

    before = decoder_stats()
    seek_sampler.uniform(video, COUNT)
    work = decoder_stats()
    seek_frames, seeks = work.frames_decoded - before.frames_decoded, work.seeks - before.seeks
    seek = _timed(lambda: seek_sampler.uniform(video, COUNT), 5)

    def decode_all() -> None:
        for raw in decode_all_at(video, timestamps):
            if raw is not None:
                encode_jpeg(raw.rgb, config.longest_side, config.jpeg_quality)

    before = decoder_stats()
    full = _timed(decode_all, 1)
    full_frames = decoder_stats().frames_decoded - before.frames_decoded

    with tempfile.TemporaryDirectory() as cache_dir:
        cached = FrameSampler(FramesConfig(), cache=FrameCache(Path(cache_dir)))
        cached.uniform(video, COUNT)
        hit = _timed(lambda: cached.uniform(video, COUNT), 5)
        assert cached.uniform(video, COUNT).from_cache == COUNT

    return {
        "seek": seek,
        "seek_frames": seek_frames,
        "seeks": seeks,
        "full": full,
        "full_frames": full_frames,
        "hit": hit,
        "size_mb": video.stat().st_size / 1e6,
    }


def _rows(content: str, r: dict[str, Any]) -> str:
    seek, full, hit = r["seek"], r["full"], r["hit"]
    return (
        f"| {content} | {r['size_mb']:.0f} MB | seek-based (`FrameSampler.uniform`, no cache) "
        f"| **{seek[0]:.2f} s** | {seek[1]:.2f} s | {r['seek_frames']} ({r['seeks']} seeks) |\n"
        f"| {content} | | decode-all (every frame, keep 32) | {full[0]:.2f} s | {full[1]:.2f} s "
        f"| {r['full_frames']} |\n"
        f"| {content} | | cache hit (same request again) | {hit[0] * 1000:.1f} ms "
        f"| {hit[1] * 1000:.1f} ms | 0 |\n"
    )


def markdown(results: dict[str, dict[str, Any]]) -> str:
    rows = "".join(_rows(content, r) for content, r in results.items())
    return f"""## frames

32 uniformly sampled frames (resized to 448 px, JPEG q85) from a 20-minute 640x360 H.264 video at
30 fps with a keyframe every 5 s, pinned to one CPU core. Target (spec section 10): seek-based
<= 1 s on one core. Two contents: *natural* (a slow pan over a detailed scene with a moving object
and a cut every 20 s; x264 uses B-frames, as in ordinary recorded video, and the sampler skips
the non-reference frames it does not need) and *noise* (scrolling noise defeats prediction:
x264 uses no B-frames, so every frame from the keyframe to the target must be decoded).

| content | file | method | time (median of 5) | best | frames decoded |
|---|---|---|---|---|---|
{rows}
Machine: {platform.machine()}, {os.cpu_count()} cores shared with other work, Python
{platform.python_version()}, PyAV {av.__version__}; the process is pinned to one core.
Reproduce: `.venv/bin/python benchmarks/frames.py` (the first run generates the videos under
`~/.cache/skillharness-bench/`, about 4 minutes each).
"""


def write_section(text: str) -> None:
    """Replace (or append) the ``## frames`` section of docs/benchmarks.md, leaving others alone."""
    old = DOCS.read_text(encoding="utf-8") if DOCS.is_file() else "# Benchmarks\n"
    lines = old.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if line.strip() == "## frames"), None)
    if start is None:
        new = old.rstrip("\n") + "\n\n" + text
    else:
        end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
        new = "".join(lines[:start]) + text + ("\n" + "".join(lines[end:]) if end < len(lines) else "")
    DOCS.parent.mkdir(parents=True, exist_ok=True)
    DOCS.write_text(new, encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--no-docs", action="store_true", help="Print only; do not update docs/benchmarks.md."
    )
    args = parser.parse_args()
    videos = {
        content: make_video(
            BENCH_DIR / f"frames-{MINUTES}min-{HEIGHT}p-{FPS}fps-k{KEYFRAME_S}-{content}.mp4", content
        )
        for content in CONTENTS
    }
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # the target is for one core
    text = markdown({content: run(video) for content, video in videos.items()})
    print(text)
    if not args.no_docs:
        write_section(text)
        print(f"updated {DOCS}")


if __name__ == "__main__":
    main()
