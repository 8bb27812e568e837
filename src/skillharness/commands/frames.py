"""``skillharness frames VIDEO --count N [--start S --end E] --out DIR``: see what the agent sees."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from skillharness.commands.folders import ensure_folder
from skillharness.errors import ConfigError
from skillharness.util.atomic import atomic_write_bytes
from skillharness.video import FrameSampler, FramesConfig, FrameSet


def frames(
    video: Annotated[Path, typer.Argument(help="Video file (mp4, mkv, webm, ...).")],
    out: Annotated[Path, typer.Option("--out", help="Folder for the JPEG files.")],
    count: Annotated[int, typer.Option("--count", "-n", help="How many frames.")] = 8,
    start: Annotated[float | None, typer.Option("--start", help="Range start, seconds (with --end).")] = None,
    end: Annotated[float | None, typer.Option("--end", help="Range end, seconds (with --start).")] = None,
    longest_side: Annotated[int, typer.Option("--longest-side", help="Longest side of a frame, px.")] = 448,
    quality: Annotated[int, typer.Option("--quality", help="JPEG quality.")] = 85,
    cache_dir: Annotated[
        Path | None, typer.Option("--cache-dir", help="Frame cache (default: user cache).")
    ] = None,
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Neither read nor write the frame cache.")
    ] = False,
) -> None:
    """Sample frames exactly as the agent would, write them as JPEGs and print their timestamps."""
    if (start is None) != (end is None):
        raise ConfigError("--start and --end go together: give both or neither")
    try:
        config = FramesConfig(
            longest_side=longest_side, jpeg_quality=quality, cache_dir=cache_dir, cache_enabled=not no_cache
        )
    except ValueError as exc:
        raise ConfigError(f"invalid frames option: {exc}") from exc
    sampler = FrameSampler(config)
    if start is not None and end is not None:
        result = sampler.range(video, start, end, count)
    else:
        result = sampler.uniform(video, count)
    _write(result, out)


def _write(result: FrameSet, out: Path) -> None:
    ensure_folder(out, "--out")
    typer.echo(f"{result.video}: duration {result.duration_s:.3f} s, {len(result.frames)} frame(s)")
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


def register(app: typer.Typer) -> None:
    """Add the ``frames`` command to the root app."""
    app.command("frames")(frames)
