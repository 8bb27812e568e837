"""``skillharness data synth``: generate the synthetic Video-MME-style benchmark."""

from __future__ import annotations

import time
from pathlib import Path

import typer

from skillharness.data.synth import DEFAULT_SEED, DEFAULT_VIDEOS, generate_benchmark

data_app = typer.Typer(help="Benchmark data tools.", no_args_is_help=True)


@data_app.command("synth")
def synth(
    out: Path = typer.Option(..., "--out", help="Folder to create (must be absent or empty unless --force)."),
    videos: int = typer.Option(DEFAULT_VIDEOS, "--videos", help="Number of videos (3 questions each)."),
    seed: int = typer.Option(DEFAULT_SEED, "--seed", help="Seed; the same seed gives the same files."),
    force: bool = typer.Option(False, "--force", help="Replace an existing non-empty folder."),
) -> None:
    """Generate mp4 videos, .srt subtitles and a Video-MME-layout questions.json with known answers."""
    started = time.perf_counter()
    path = generate_benchmark(out, videos=videos, seed=seed, force=force)
    elapsed = time.perf_counter() - started
    typer.echo(f"wrote {videos} videos and {videos * 3} questions to {path} in {elapsed:.1f} s")
    typer.echo(f"  questions: {path / 'questions.json'}")
    typer.echo(f"  videos:    {path / 'videos'}")
    typer.echo(f"  subtitles: {path / 'subtitles'}")
    typer.echo(f"  try: skillharness frames {next(iter(sorted((path / 'videos').iterdir())))} --count 8 --out frames/")


def register(app: typer.Typer) -> None:
    """Add the ``data`` command group to the root app."""
    app.add_typer(data_app, name="data")
