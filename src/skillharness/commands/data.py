"""``skillharness data synth``: generate the synthetic Video-MME-style benchmark."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer

from skillharness.data.synth import DEFAULT_SEED, DEFAULT_VIDEOS, generate_benchmark

data_app = typer.Typer(help="Benchmark data tools.", no_args_is_help=True)


@data_app.command("synth")
def synth(
    out: Annotated[Path, typer.Option("--out", help="Folder to create (absent or empty unless --force).")],
    videos: Annotated[
        int, typer.Option("--videos", help="Number of videos (3 questions each).")
    ] = DEFAULT_VIDEOS,
    seed: Annotated[int, typer.Option("--seed", help="The same seed gives the same files.")] = DEFAULT_SEED,
    force: Annotated[bool, typer.Option("--force", help="Replace an existing non-empty folder.")] = False,
) -> None:
    """Generate mp4 videos, .srt subtitles and a Video-MME-layout questions.json with known answers."""
    started = time.perf_counter()
    path = generate_benchmark(out, videos=videos, seed=seed, force=force)
    elapsed = time.perf_counter() - started
    first_video = sorted((path / "videos").iterdir())[0]
    typer.echo(f"wrote {videos} videos and {videos * 3} questions to {path} in {elapsed:.1f} s")
    typer.echo(f"  questions: {path / 'questions.json'}  (answers explained in truth.json)")
    typer.echo(f"  videos:    {path / 'videos'}")
    typer.echo(f"  subtitles: {path / 'subtitles'}")
    typer.echo(f"  look:      skillharness frames {first_video} --count 8 --out frames/")


def register(app: typer.Typer) -> None:
    """Add the ``data`` command group to the root app."""
    app.add_typer(data_app, name="data")
