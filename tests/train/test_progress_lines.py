"""What ``train`` and ``infer``/``eval`` draw while they run, at 80 columns and away from a terminal:
each line within 80 columns, names shortened at a word boundary, counters within their totals,
an ETA never 0 while work remains, and one plain line per step or decision in a log."""

from __future__ import annotations

import io
import re

from rich.console import Console

from skillharness.infer.progress import RichProgress, short_name
from skillharness.train.config import BudgetConfig
from skillharness.train.loop.progress import TrainProgress, fit_parts
from skillharness.train.state.checkpoint import Checkpoint, Spent

_CONTROL = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\r")
_CLASSES = ("Attribute Perception", "Counting Problem", "Spatial Reasoning", "Temporal Perception")


def _console(*, terminal: bool) -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, width=80, force_terminal=terminal, color_system=None), out


def _lines(text: str) -> list[str]:
    """What the screen shows, line by line (cursor movements dropped)."""
    return [line for line in _CONTROL.sub("\n", text).splitlines() if line.strip()]


def _ckpt(epoch: int, step: int, **update: object) -> Checkpoint:
    ema = {name: 0.5 for name in _CLASSES}
    spent = Spent(calls=100 * (epoch + step), cost=0.0, wall_s=5.0)
    ckpt = Checkpoint(
        run_id="r1", baseline_run_id="r1.baseline", epoch=epoch, step=step, ema=ema, spent=spent
    )
    return ckpt.model_copy(update=update)


def test_a_name_is_shortened_at_a_word_boundary_never_mid_word() -> None:
    assert short_name("Attribute Perception", 18) == "Attribute…"
    assert short_name("Counting Problem", 18) == "Counting Problem"
    assert short_name("qwen7b-val-baseline-2026-12-05", 24) == "qwen7b-val-baseline…"
    assert short_name("qwen7b-val-baseline-2026-12-05", 25) == "qwen7b-val-baseline-2026…"
    for width in range(6, 30):
        for name in (*_CLASSES, "qwen7b-val-baseline-2026-12-05"):
            cut = short_name(name, width)
            assert len(cut) <= width
            kept = cut.removesuffix("…")
            assert name.startswith(kept)
            # Whole, or cut where a word ends (inside the first word only when it alone is too wide).
            first_word = re.split(r"[ .-]", name)[0]
            assert cut == name or name[len(kept)] in " -." or len(first_word) >= width


def test_the_infer_and_holdout_progress_fit_80_columns_with_a_whole_label() -> None:
    """Issue item 7: at 80 columns the line wrapped to 3-5 lines (the health inside the bar's line)."""
    console, out = _console(terminal=True)
    progress = RichProgress(console, label="qwen7b-val-baseline-2026-12-05")
    progress.breakers = lambda: "endpoint 127.0.0.1:8000 closed, 127.0.0.1:8001 half-open (retry in 12 s)"
    with progress:
        progress.start(600, 120)
    shown = _lines(out.getvalue())
    assert shown
    assert all(len(line) <= 80 for line in shown), shown
    final = shown[-2:]  # the last frame: the bar's line and the health's line
    assert final[0].startswith("qwen7b-val-baseline… ")
    assert "120/600" in final[0]
    assert final[1].strip().startswith("cache 0 · parse err 0 · infra err 0 · endpoint")


def test_the_training_panel_never_passes_its_totals_nor_cuts_a_class_mid_word() -> None:
    """Issue item 7: "epoch / step 3/2", "step 4/3", "Attribute Percepti", ETA 0 s in evidence rounds."""
    console, out = _console(terminal=True)
    progress = TrainProgress(console, run_id="r1", epochs=2)
    # Each frame as the live panel draws it (its refresh thread would draw them at its own pace).
    progress.on_step(_ckpt(2, 0), 3)
    progress.on_checkpoint(_ckpt(2, 1))
    console.print(progress._render())
    progress.on_checkpoint(_ckpt(2, 4))  # an evidence round after the planned 3 steps
    console.print(progress._render())
    drained = out.getvalue()
    progress.on_checkpoint(_ckpt(3, 0))  # the cursor past the last epoch
    console.print(progress._render())
    text = " ".join(out.getvalue().split())
    assert "evidence round 2" in " ".join(drained.split())
    assert "epoch 2/2 done" in text
    assert "step 5/3" not in text
    assert "3/2" not in text
    assert "Attribute Percepti " not in text
    assert "Attribute… 0.50" in text
    assert "ETA │ 0 s" not in text
    assert "unknown" in text
    assert all(len(line) <= 80 for line in _lines(out.getvalue()))


def test_away_from_a_terminal_each_step_and_decision_prints_one_plain_entry_at_once() -> None:
    """Issue item 1: under nohup or tee the live panel drew nothing until the run ended. Item 7: an
    entry longer than 80 columns continues on an indented line, broken between its parts."""
    console, out = _console(terminal=False)
    with TrainProgress(console, run_id="r1", epochs=2) as progress:
        progress.budget = BudgetConfig(max_calls=1000)
        progress.on_step(_ckpt(1, 0), 3)
        assert out.getvalue().count("\n") == 2  # written already, not when the run ends
        progress.on_checkpoint(_ckpt(1, 0))  # nothing moved: nothing said
        progress.on_checkpoint(_ckpt(1, 0, gates_run=1))  # a decision
        progress.on_checkpoint(_ckpt(1, 1))
    lines = out.getvalue().splitlines()
    assert all(len(line) <= 80 for line in lines), lines
    entries = [e.replace("\n  ", " · ") for e in re.split(r"\n(?! )", out.getvalue().strip())]
    assert len(entries) == 3, lines
    assert entries[0] == (
        "train r1 · epoch 1/2 step 1/3 · v0000 · 0 tests, 0 accepted · 100 / 1,000 calls (10%) · ETA unknown"
    )
    assert "1 tests" in entries[1]
    assert entries[2].startswith("train r1 · epoch 1/2 step 2/3 · ")
    assert re.search(r"ETA (\d+|< 1) s$", entries[2])  # known after one step, and not 0
    assert "┌" not in out.getvalue()  # no panel drawn at the end either


def test_a_step_never_shows_fewer_calls_than_the_last_saved_checkpoint() -> None:
    """The loop hands on_step its own copy, whose spending is that of its last load: the display
    read 882 calls, then 297, then 882 again."""
    console, out = _console(terminal=False)
    progress = TrainProgress(console, run_id="r1", epochs=2)
    progress.on_checkpoint(_ckpt(1, 0, spent=Spent(calls=882, cost=0.0, wall_s=9.0)))
    progress.on_step(_ckpt(1, 1, spent=Spent(calls=297, cost=0.0, wall_s=3.0)), 3)
    said = [int(n.replace(",", "")) for n in re.findall(r"([\d,]+) calls", out.getvalue())]
    assert said == [882, 882]


def test_parts_break_between_parts_within_the_width() -> None:
    parts = ["train a-long-run-id", "epoch 1/2 step 1/3", "v0000", "11 tests, 0 accepted", "882 calls"]
    for width in (24, 40, 80, 200):
        text = fit_parts(parts, width)
        assert text.replace("\n  ", " · ") == " · ".join(parts)
        assert all(len(line) <= width for line in text.splitlines())
    assert fit_parts(["a-part-wider-than-the-width"], 10) == "a-part-wider-than-the-width"
