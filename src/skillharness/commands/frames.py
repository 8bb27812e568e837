"""``skillharness frames VIDEO --count N [--start S --end E] --out DIR``: see what the agent sees."""

from __future__ import annotations

from pathlib import Path

import typer

from skillharness.errors import ConfigError
from skillharness.util.atomic import atomic_write_bytes
from skillharness.video import FrameSampler, FramesConfig


def frames(
    video: Path = typer.Argument(..., help="Video file (mp4, mkv, webm, ...)."),
    count: int = typer.Option(8, "--count", "-n", help="How many frames."),
    start: float | None = typer.Option(None, "--start", help="Range start in seconds (with --end)."),
    end: float | None = typer.Option(None, "--end", help="Range end in seconds (with --start)."),
    out: Path = typer.Option(..., "--out", help="Folder for the JPEG files."),
    longest_side: int = typer.Option(448, "--longest-side", help="Resize so the longest side is this many px."),
    quality: int = typer.Option(85, "--quality", help="JPEG quality."),
    cache_dir: Path | None = typer.Option(None, "--cache-dir", help="Frame cache folder (default: user cache)."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Decode afresh and do not write the frame cache."),
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
    out.mkdir(parents=True, exist_ok=True)
    typer.echo(f"{video}: duration {result.duration_s:.3f} s, {len(result.frames)} frame(s)")
    for index, frame in enumerate(result.frames):
        name = f"frame_{index:03d}_{frame.timestamp_s:010.3f}s.jpg"
        atomic_write_bytes(out / name, frame.jpeg)
        typer.echo(f"{frame.timestamp_s:10.3f} s  (shown from {frame.pts_s:.3f} s)  {frame.width}x{frame.height}  {name}")
    if result.degraded:
        failed = ", ".join(f"{t:.3f}" for t in result.failed_timestamps)
        typer.secho(f"degraded: no frame could be decoded at {failed} s", err=True, fg=typer.colors.YELLOW)


def register(app: typer.Typer) -> None:
    """Add the ``frames`` command to the root app."""
    app.command("frames")(frames)
