"""The demo's experiment: benchmark size, world, and the experiment.yaml a user can rerun.

Size is chosen from the gate, not guessed: with sampling at temperature 0.7 a gate draws fresh
samples with replacement, so a class's claim rests on its distinct val questions; the demo gives
every class about ``_VAL_PER_CLASS`` of them (``gate plan`` shows why fewer make accepts claims
about very few questions) and the decisive simulator world (one insight per class worth ~40
points) lets a gate decide within a few dozen draws.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from skillharness.data import DEFAULT_BENCHMARK
from skillharness.sim import SimServer
from skillharness.train.config import GateConfig

__all__ = ["DEMO_TEMPERATURE", "DEMO_VIDEOS", "demo_sizes", "size_explanation", "write_experiment"]

DEMO_VIDEOS = 96  # 3 questions each: 288 questions
DEMO_TEMPERATURE = 0.7
# The demo's small val pool (6-11 questions per class) is what it has: its claims rest on that
# many distinct questions, and it says so by lowering train.gate.min_distinct to match, rather
# than leaving every class out as micro.
DEMO_GATE = GateConfig(n_max=64, first_stage=8, guard_draws=8, min_distinct=6)
_VAL_PER_CLASS = 8


def demo_sizes(videos: int) -> tuple[int, int, int]:
    """Train/val/test video counts: a quarter to train, the rest split evenly between val and test."""
    train = max(1, videos // 4)
    val = (videos - train) // 2
    return train, val, videos - train - val


def size_explanation(videos: int, val_questions: int, classes: int) -> str:
    train, val, test = demo_sizes(videos)
    per_class = val_questions / max(classes, 1)
    return (
        f"{videos} videos ({train} train, {val} val, {test} test): about {per_class:.0f} val questions "
        f"per task type. Agent sampling is at temperature {DEMO_TEMPERATURE}, so each gate draws fresh "
        "samples with replacement and needs at least 8 net wins (alpha 0.05, bets <= 1/2); about "
        f"{_VAL_PER_CLASS} distinct questions per class keep a claim from resting on a handful "
        "(`skillharness gate plan` shows the power per class)."
    )


def write_experiment(
    folder: Path,
    *,
    bench: Path,
    questions: Path,
    benchmark: str,
    pools: Path,
    bundle: Path,
    sim: SimServer,
    store: Path,
    cache: Path,
) -> Path:
    """experiment.yaml for the demo (the simulator's URL is this process's; see the README to rerun)."""
    doc: dict[str, Any] = {
        "data": {
            "questions": str(questions),
            "pools": str(pools),
            "videos_dir": str(bench / "videos"),
            "subtitles_dir": str(bench / "subtitles"),
        },
        "llm": {"model": sim.model_name, "endpoints": [{"base_url": sim.base_url}]},
        "cache": {"url": f"sqlite:///{cache}"},
        "store": {"url": f"sqlite:///{store}"},
        "agent": {
            "bundle": str(bundle),
            "concurrency": 16,
            # One seed per draw (the default above temperature 0), its salt pinned: a second demo
            # draws the same seeds, so it replays the first from the cache, number for number.
            "sampling": {"temperature": DEMO_TEMPERATURE, "seed": "per_draw"},
            "seed_salt": "demo",
            "frames": {"cache_dir": str(folder.parent / "frame-cache")},
        },
        "train": {
            "epochs": 2,
            "batch_size": 8,
            "early_stop_patience": 2,
            "gate": DEMO_GATE.model_dump(include={"n_max", "first_stage", "guard_draws", "min_distinct"}),
        },
        "eval": {"run_holdout_eval": True},
    }
    if benchmark != DEFAULT_BENCHMARK:  # the default layout's experiment.yaml stays as it was
        doc["data"]["benchmark"] = benchmark
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "experiment.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path
