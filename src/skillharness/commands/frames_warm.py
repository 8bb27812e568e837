"""``skillharness frames warm``: fill the frame cache for a pool before a run needs it."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from skillharness.agent import question_window
from skillharness.config import load_config
from skillharness.data import Pool
from skillharness.errors import ConfigError
from skillharness.infer import load_job
from skillharness.video import DecodePool, FrameSet, locate_video


def warm_pool(config: Path | None, pool: str, flags: Mapping[str, Any], workers: int | None) -> None:
    """Cache the first message's uniform frames of each video of ``pool`` (``all``: every question).

    Exits 1 after the last video when any video could not be decoded (each one is named).
    """
    if workers is not None and workers < 1:
        raise ConfigError(f"--workers must be at least 1, got {workers}")
    settings = load_config(config, dict(flags))
    chosen = None if pool == "all" else Pool.named(pool, what="--pool (or 'all')")
    job = load_job(settings, pool=chosen, run_id=None, resume=False)
    agent = settings.agent
    count = min(agent.initial_frames, agent.max_frames)
    console = Console()
    if not agent.vision or count == 0 or agent.protocol != "skillharness":
        console.print(
            f"nothing to warm: the first message shows no cached frames "
            f"(vision={agent.vision}, initial_frames={count}, protocol={agent.protocol})"
        )
        return
    if job.data.videos_dir is None:
        raise ConfigError("data.videos_dir is not set: the folder holding <videoID>.mp4 files")
    # One entry per video and clip window: a question about a stretch sees that stretch's frames.
    seen = {(q.videoID, question_window(q)): q.task_type for q in job.questions}
    videos = [locate_video(job.data.videos_dir, video_id, task=task) for (video_id, _), task in seen.items()]
    windows = [window for _, window in seen]
    decode_pool = DecodePool(agent.frames, workers)
    failed: list[str] = []
    decoded = cached = 0
    try:
        with _bar(console) as progress:
            task = progress.add_task(f"{pool}: {count} frames per video", total=len(videos))
            for video, result in zip(videos, decode_pool.map_uniform(videos, count, windows), strict=True):
                if isinstance(result, FrameSet):
                    cached += result.from_cache
                    decoded += len(result.frames) - result.from_cache
                else:
                    failed.append(f"{video}: {result}")
                progress.advance(task)
    finally:
        decode_pool.close()
    console.print(
        f"{len(videos)} video(s), {decoded} frame(s) decoded, {cached} already cached, "
        f"{decode_pool.workers} worker process(es)"
    )
    if failed:
        for line in failed:
            console.print(f"[yellow]not warmed[/yellow] {line}")
        raise typer.Exit(1)


def _bar(console: Console) -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=console,
        transient=False,
    )
