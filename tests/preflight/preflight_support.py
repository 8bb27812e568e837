"""Shared helpers of the preflight tests: the bench and an experiment YAML over it."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

from bench_support import Bench
from skillharness.config import Config, load_config

# With alpha 0.5 and bet cap 1/2 a gate needs 2 wins (1.5^2 >= 2), so the tiny synthetic split
# has reachable classes (2 val questions) and unreachable ones (1 val question) side by side.
# min_distinct 2: the reachable classes' 2 val questions are enough for a claim here; the
# unreachable class's one is micro by both rules.
GATE = {"alpha": 0.5, "bet_cap": 0.5, "min_distinct": 2}
REACHABLE = ["Attribute Perception", "OCR Problems"]  # 2 val and 1 train question each
UNREACHABLE = "Action Reasoning"  # 1 val question
# The retry policy of tests whose endpoint probe meets failures: 3 quick attempts (the default policy
# spends about half a minute on a refused connection before it is final).
FAST_RETRY = {"max_attempts": 3, "base_delay_s": 0.01, "max_delay_s": 0.05}


def _merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    merged = copy.deepcopy(base)
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def write_config(folder: Path, bench: Bench, base_url: str, model: str, **sections: Any) -> Path:
    """A training experiment YAML that passes every check; ``sections`` override parts of it."""
    doc = {
        "data": {
            "questions": str(bench.questions),
            "pools": str(bench.pools),
            "pools_sha256": bench.pools_sha256,
            "videos_dir": str(bench.root / "videos"),
            "subtitles_dir": str(bench.root / "subtitles"),
        },
        "llm": {"model": model, "endpoints": [{"base_url": base_url}]},
        "cache": {"url": f"sqlite:///{folder / 'cache.sqlite'}"},
        "store": {"url": f"sqlite:///{folder / 'runs.sqlite'}"},
        "agent": {"bundle": str(bench.bundle)},
        "train": {"task_types": REACHABLE, "gate": GATE},
        "eval": {"run_holdout_eval": False},
    }
    path = folder / "experiment.yaml"
    path.write_text(yaml.safe_dump(_merge(doc, sections)))
    return path


def config_of(path: Path) -> Config:
    return load_config(path)
