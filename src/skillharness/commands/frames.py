"""``skillharness frames``: see what the agent sees, and pre-extract a pool's first frames.

- ``skillharness frames [show] VIDEO --count N [--start S --end E] [--clip-start A --clip-end B]
  --out DIR`` writes the frames the agent would be shown (``show`` is the default subcommand).
  With a clip window (a question about ``[A, B]`` of the video, as MVBench's) the agent sees
  only that stretch, timed from its start: ``--start``/``--end`` are then on the clip's timeline.
- ``skillharness frames warm --config C --pool val`` fills the frame cache with the uniform
  frames of every video's first message in the pool, on every core, so a run never waits on
  decoding for the videos it revisits.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import click
import typer
from typer.core import TyperGroup

from skillharness.commands.folders import ensure_folder
from skillharness.errors import ConfigError
from skillharness.util.atomic import atomic_write_bytes
from skillharness.video import FrameSampler, FramesConfig, FrameSet, Window


class _ShowByDefault(TyperGroup):
    """``frames VIDEO ...`` means ``frames show VIDEO ...`` (the command's original form)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args or (args[0] not in self.commands and args[0] not in ("--help", "-h")):
            args = ["show", *args]
        return super().parse_args(ctx, args)


frames_app = typer.Typer(cls=_ShowByDefault, help="Look at sampled frames; pre-extract a pool's frames.")


def frames(
    video: Annotated[Path, typer.Argument(help="Video file (mp4, mkv, webm, ...).")],
    out: Annotated[Path, typer.Option("--out", help="Folder for the JPEG files.")],
    count: Annotated[int, typer.Option("--count", "-n", min=1, help="How many frames.")] = 8,
    start: Annotated[float | None, typer.Option("--start", help="Range start, seconds (with --end).")] = None,
    end: Annotated[float | None, typer.Option("--end", help="Range end, seconds (with --start).")] = None,
    longest_side: Annotated[
        int, typer.Option("--longest-side", min=32, max=4096, help="Longest side of a frame, px.")
    ] = 448,
    quality: Annotated[int, typer.Option("--quality", min=10, max=100, help="JPEG quality.")] = 85,
    cache_dir: Annotated[
        Path | None, typer.Option("--cache-dir", help="Frame cache (default: user cache).")
    ] = None,
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Neither read nor write the frame cache.")
    ] = False,
    clip_start: Annotated[
        float | None, typer.Option("--clip-start", help="A question's clip window start, seconds.")
    ] = None,
    clip_end: Annotated[
        float | None, typer.Option("--clip-end", help="A question's clip window end, seconds.")
    ] = None,
) -> None:
    """Sample frames exactly as the agent would, write them as JPEGs and print their timestamps."""
    if (start is None) != (end is None):
        raise ConfigError("--start and --end go together: give both or neither")
    window = _window(clip_start, clip_end)
    try:
        config = FramesConfig(
            longest_side=longest_side, jpeg_quality=quality, cache_dir=cache_dir, cache_enabled=not no_cache
        )
    except ValueError as exc:
        raise ConfigError(f"invalid frames option: {exc}") from exc
    sampler = FrameSampler(config)
    if start is not None and end is not None:
        result = sampler.range(video, start, end, count, window)
    else:
        result = sampler.uniform(video, count, window)
    _write(result, out)


def _window(clip_start: float | None, clip_end: float | None) -> Window | None:
    if clip_start is None and clip_end is None:
        return None
    if clip_start is None or clip_end is None:
        raise ConfigError("--clip-start and --clip-end go together: give both or neither")
    try:
        return Window(clip_start, clip_end)
    except ValueError as exc:
        raise ConfigError(f"--clip-start/--clip-end: {exc}") from exc


def _write(result: FrameSet, out: Path) -> None:
    ensure_folder(out, "--out")
    clip = ""
    if result.window is not None:
        clip = f" (clip {result.window.label()} of the file; times below are from the clip's start)"
    typer.echo(f"{result.video}: duration {result.duration_s:.3f} s{clip}, {len(result.frames)} frame(s)")
    for index, frame in enumerate(result.frames):
        name = f"frame_{index:03d}_{frame.timestamp_s:.3f}s.jpg"
        atomic_write_bytes(out / name, frame.jpeg)
        size = f"{frame.width}x{frame.height}"
        typer.echo(
            f"{frame.timestamp_s:10.3f} s  (frame shown from {frame.pts_s:.3f} s)  {size}  {out / name}"
        )
    if result.degraded:
        failed = ", ".join(f"{t:.3f}" for t in result.failed_timestamps)
        typer.secho(f"degraded: no frame could be decoded at {failed} s", err=True, fg=typer.colors.YELLOW)


def warm(
    config: Annotated[Path | None, typer.Option("--config", help="Experiment YAML.")] = None,
    pool: Annotated[str, typer.Option("--pool", help="train | val | test, or 'all'.")] = "val",
    questions: Annotated[Path | None, typer.Option("--questions", help="Override data.questions.")] = None,
    pools: Annotated[Path | None, typer.Option("--pools", help="Override data.pools.")] = None,
    videos_dir: Annotated[Path | None, typer.Option("--videos-dir", help="Override data.videos_dir.")] = None,
    workers: Annotated[int | None, typer.Option("--workers", help="Processes (default: every core).")] = None,
) -> None:
    """Decode and cache the first-message frames of every video the pool asks about."""
    from skillharness.commands.frames_warm import warm_pool

    warm_pool(
        config,
        pool,
        {"data.questions": questions, "data.pools": pools, "data.videos_dir": videos_dir},
        workers,
    )


frames_app.command("show")(frames)
frames_app.command("warm")(warm)


def register(app: typer.Typer) -> None:
    """Add the ``frames`` group to the root app."""
    app.add_typer(frames_app, name="frames")
