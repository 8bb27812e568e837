"""``skillharness data synth``: generate the synthetic Video-MME-style benchmark.
``skillharness data check``: read a questions file through a benchmark adapter and summarize it."""

from __future__ import annotations

import json
import shlex
import time
from collections import Counter
from pathlib import Path
from typing import Annotated

import typer

from skillharness.data import (
    DEFAULT_BENCHMARK,
    DEFAULT_SEED,
    DEFAULT_VIDEOS,
    LoadedBenchmark,
    Question,
    generate_benchmark,
    load_adapter,
    load_benchmark,
)
from skillharness.data.adapter import builtin_adapters

data_app = typer.Typer(help="Benchmark data tools.", no_args_is_help=True)


@data_app.command("synth")
def synth(
    out: Annotated[Path, typer.Option("--out", help="Folder to create (absent or empty unless --force).")],
    videos: Annotated[
        int, typer.Option("--videos", help="Number of videos (3 questions each).")
    ] = DEFAULT_VIDEOS,
    seed: Annotated[int, typer.Option("--seed", help="The same seed gives the same files.")] = DEFAULT_SEED,
    force: Annotated[bool, typer.Option("--force", help="Replace an existing non-empty folder.")] = False,
    layout: Annotated[
        str,
        typer.Option(
            "--layout", help="Write it in this benchmark's layout: a built-in adapter or an adapter .yaml."
        ),
    ] = DEFAULT_BENCHMARK,
) -> None:
    """Generate mp4 videos, subtitles and questions with known answers, in a benchmark's file layout.

    The default is Video-MME's (questions.json); --layout egoschema, mvbench, longvideobench, mlvu,
    nextqa or videomme_v2 writes the same kind of questions as that benchmark ships them.
    """
    started = time.perf_counter()
    path = generate_benchmark(out, videos=videos, seed=seed, force=force, layout=layout)
    elapsed = time.perf_counter() - started
    first_video = sorted((path / "videos").iterdir())[0]
    manifest = json.loads((path / "manifest.json").read_text(encoding="utf-8"))
    questions = path / manifest.get("questions_path", "questions.json")
    typer.echo(f"wrote {videos} videos and {manifest['questions']} questions to {path} in {elapsed:.1f} s")
    typer.echo(f"  questions: {questions}  (answers explained in truth.json)")
    typer.echo(f"  videos:    {path / 'videos'}")
    typer.echo(f"  subtitles: {path / 'subtitles'}")
    if "benchmark" in manifest:
        typer.echo(f"  check:     skillharness data check --benchmark {_layout_arg(layout)} {questions}")
    typer.echo(f"  look:      skillharness frames {first_video} --count 8 --out frames/")


def _layout_arg(layout: str) -> str:
    """``--layout`` as ``--benchmark`` takes it back: a built-in name, or the adapter file's path
    (its ``name:`` is no built-in, so a command naming it would fail)."""
    if layout in builtin_adapters():
        return layout
    return shlex.quote(str(Path(layout).expanduser().resolve()))


_WIDTH = 80  # a common terminal, and what a pipe gets


@data_app.command("check")
def check(
    questions: Annotated[Path, typer.Argument(help="Questions file (or folder, for per-task layouts).")],
    benchmark: Annotated[
        str,
        typer.Option("--benchmark", help="A built-in adapter name or an adapter .yaml file."),
    ] = "videomme",
    answers: Annotated[
        Path | None, typer.Option("--answers", help="Answers file, if apart (overrides the adapter's).")
    ] = None,
) -> None:
    """Load QUESTIONS through an adapter; print counts per task type, option counts and clip windows.

    Built-in adapters: videomme, videomme_v2, mvbench, egoschema, longvideobench, mlvu, nextqa.
    """
    adapter = load_adapter(benchmark)
    loaded = load_benchmark(questions, adapter, answers)
    for line in summary_lines(loaded, str(questions)):
        typer.echo(line)


def summary_lines(loaded: LoadedBenchmark, source: str) -> list[str]:
    """The ``data check`` report, every line at most 80 columns."""
    questions = loaded.questions
    lines = [
        _fit(f"{len(questions)} questions in {len({q.video_id for q in questions})} videos, "
             f"adapter {loaded.adapter!r}"),
        _fit(f"from {source}"),
        "",
    ]  # fmt: skip
    by_type = Counter(q.task_type for q in questions)
    lines += _table("task type", sorted(by_type.items(), key=lambda kv: (-kv[1], kv[0])))
    known = len(loaded.benchmark.task_types)
    if known > len(by_type):
        lines.append(f"({known - len(by_type)} task type(s) of the benchmark have no question here)")
    lines.append("")
    lines += _table("options", sorted(Counter(str(len(q.options)) for q in questions).items()))
    lines.append("")
    lines += _table("duration", sorted(Counter(q.duration for q in questions).items()))
    lines.append("")
    lines.append(_clip_line(questions))
    if loaded.unread_fields:  # a misspelt clip or subtitle field would otherwise pass unseen
        lines.append("fields the adapter names that no row has (misspelt?):")
        lines += [_fit(f"  {key}: {name}") for name, key in loaded.unread_fields.items()]
    if loaded.dropped:
        lines.append(_fit(f"left out (no answer in the answers file): {len(loaded.dropped)} question(s)"))
    return lines


def _table(label: str, counts: list[tuple[str, int]]) -> list[str]:
    number_width = max(len("questions"), *(len(str(n)) for _, n in counts)) if counts else 9
    name_width = min(max([len(label), *(len(k) for k, _ in counts)]), _WIDTH - number_width - 2)
    rows = [f"{label:<{name_width}}  {'questions':>{number_width}}"]
    rows += [f"{_cut(k, name_width):<{name_width}}  {n:>{number_width}}" for k, n in counts]
    return rows


def _clip_line(questions: tuple[Question, ...]) -> str:
    clipped = [q for q in questions if q.clip_start is not None and q.clip_end is not None]
    if not clipped:
        return "clip windows: none (every question is about its whole video)"
    lengths = [q.clip_end - q.clip_start for q in clipped]
    return _fit(
        f"clip windows: {len(clipped)} of {len(questions)} question(s), "
        f"{min(lengths):.1f}-{max(lengths):.1f} s long"
    )


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _fit(text: str) -> str:
    return _cut(text, _WIDTH)


def register(app: typer.Typer) -> None:
    """Add the ``data`` command group to the root app."""
    app.add_typer(data_app, name="data")
