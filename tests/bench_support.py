"""A small synthetic benchmark with a frozen split and an initial bundle, for end-to-end tests.

The fixtures built on it (``bench`` and its variants, the simulators) are in tests/conftest.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import pyarrow as pa
import pyarrow.parquet as pq

from skillharness.data import Pool
from skillharness.data.loader import load_questions
from skillharness.data.pools import write_split
from skillharness.data.questions import Question
from skillharness.data.split import SplitParams, make_split
from skillharness.data.synth import ensure_synthetic_benchmark
from skillharness.llm.types import SamplingParams
from skillharness.sim import SimConfig, SimServer
from skillharness.skills import initial_bundle
from skillharness.store import RunKind, RunProvenance, RunStatus, RunStore, StoreConfig


@dataclass(frozen=True)
class Bench:
    root: Path
    questions: Path
    pools: Path
    pools_sha256: str
    bundle: Path


class StartSim(Protocol):
    """The ``sim_factory`` fixture: start a simulator that stops when the test ends."""

    def __call__(
        self,
        config: SimConfig,
        questions: Sequence[Question] | Path | None = None,
        benchmark: str = "videomme",
    ) -> SimServer: ...


def make_bench(
    base: Path, *, seed: int = 3, videos: int = 12, sizes: tuple[int, int, int] = (4, 4, 4)
) -> Bench:
    """Generate (or reuse) the benchmark under ``base``, split it by video and write a bundle."""
    root = ensure_synthetic_benchmark(base / "synth", seed=seed, videos=videos)
    questions_path = root / "questions.json"
    questions = load_questions(questions_path)
    split = make_split(questions, SplitParams(sizes=sizes, unit="video", seed=seed))
    written = write_split(split, questions, questions_path, base / "split", force=False, version="test")
    initial_bundle().save(base / "bundle")
    return Bench(root, questions_path, written.pools_path, written.pools_sha256, base / "bundle")


def experiment_doc(folder: Path, bench: Bench, *, model: str, base_url: str, **agent: Any) -> dict[str, Any]:
    """An experiment config over ``bench`` and one endpoint, with its store and caches in ``folder``."""
    return {
        "data": {
            "questions": str(bench.questions),
            "pools": str(bench.pools),
            "videos_dir": str(bench.root / "videos"),
            "subtitles_dir": str(bench.root / "subtitles"),
        },
        "llm": {"model": model, "endpoints": [{"base_url": base_url}]},
        "cache": {"url": f"sqlite:///{folder / 'cache.sqlite'}"},
        "store": {"url": f"sqlite:///{folder / 'runs.sqlite'}"},
        "agent": {"bundle": str(bench.bundle), "frames": {"cache_dir": str(folder / "frames")}, **agent},
    }


V2_GROUPS = (("relevance", "[1, 2, 3, 4]"), ("logic", "[1, [2, 3], 4]"), ("logic", "[[1, 2], 3, 4]"))
_PLACES = ("first", "second", "third", "last")


def v2_questions_file(bench: Bench, path: Path, videos: int = 3) -> Path:
    """A questions file in Video-MME-v2's ``test.parquet`` columns over ``videos`` of the bench's
    videos, four questions each (one group per video, the group types in turn); the task types
    are Video-MME's, so the bench's bundle has a skill for each."""
    names = sorted({q.videoID for q in load_questions(bench.questions)})[:videos]
    rows = [
        {
            "video_id": video,
            "question_id": f"{video}-{k}",
            "question": f"In clip {video}, which scene comes {_PLACES[k - 1]}?",
            "options": "\n".join(f"{x}. scene {x.lower()}{k}" for x in "ABCDEFGH"),
            "answer": "ABCDEFGH"[(3 * k + i) % 8],
            "group_type": V2_GROUPS[i % len(V2_GROUPS)][0],
            "group_structure": V2_GROUPS[i % len(V2_GROUPS)][1],
            "level": 1 + i % 3,
            "second_head": "Temporal Reasoning" if k < 4 else "Spatial Reasoning",
            "third_head": "Order",
        }
        for i, video in enumerate(names)
        for k in (1, 2, 3, 4)
    ]
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


async def store_runs(store: Path, sim: SimServer, *runs: dict[str, Any], status: RunStatus) -> None:
    """Runs without answers in the SQLite store ``store``: an infer run of val against ``sim`` with
    each of ``runs``' fields changed (id, kind, pool, parent), closed with ``status``."""
    base = RunProvenance(
        run_id="x",
        kind=RunKind.INFER,
        config_hash="c" * 64,
        bundle_hash="b" * 64,
        pool=Pool.VAL,
        model=sim.model_name,
        endpoints=(sim.base_url,),
        sampling=SamplingParams(temperature=0.7),
    )
    opened = RunStore.open(StoreConfig(url=f"sqlite:///{store}"))
    try:
        for fields in runs:
            await (await opened.open_run(base.model_copy(update=fields))).close(status)
    finally:
        opened.close()
