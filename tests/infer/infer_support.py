"""Shared helpers of the inference tests."""

from __future__ import annotations

from pathlib import Path

import yaml

from bench_support import Bench
from skillharness.sim import SimServer


def write_config(path: Path, bench: Bench, sim: SimServer, **agent: object) -> Path:
    """An experiment YAML pointing at the bench, the simulator and stores under ``path``'s folder."""
    folder = path.parent
    doc = {
        "data": {
            "questions": str(bench.questions),
            "pools": str(bench.pools),
            "videos_dir": str(bench.root / "videos"),
            "subtitles_dir": str(bench.root / "subtitles"),
        },
        "llm": {"model": sim.model_name, "endpoints": [{"base_url": sim.base_url}]},
        "cache": {"url": f"sqlite:///{folder / 'cache.sqlite'}"},
        "store": {"url": f"sqlite:///{folder / 'runs.sqlite'}"},
        "agent": {
            "bundle": str(bench.bundle),
            "concurrency": 4,
            "frames": {"cache_dir": str(folder / "frames")},
            **agent,
        },
    }
    path.write_text(yaml.safe_dump(doc))
    return path
