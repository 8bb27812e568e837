"""Fixtures for preflight: a synthetic benchmark, its frozen split, a bundle, a simulator."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from preflight_support import Bench

from skillharness.data.loader import load_questions
from skillharness.data.pools import write_split
from skillharness.data.split import SplitParams, make_split
from skillharness.data.synth import ensure_synthetic_benchmark
from skillharness.sim import LatencyConfig, SimConfig, SimServer
from skillharness.skills import initial_bundle


@pytest.fixture(scope="session")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Bench:
    base = tmp_path_factory.mktemp("preflight-bench")
    root = ensure_synthetic_benchmark(base / "synth", seed=3, videos=12)
    questions_path = root / "questions.json"
    questions = load_questions(questions_path)
    split = make_split(questions, SplitParams(sizes=(4, 4, 4), unit="video", seed=3))
    written = write_split(split, questions, questions_path, base / "split", force=False, version="test")
    initial_bundle().save(base / "bundle")
    return Bench(root, questions_path, written.pools_path, written.pools_sha256, base / "bundle")


@pytest.fixture(scope="session")
def sim(bench: Bench) -> Iterator[SimServer]:
    config = SimConfig(seed=3, latency=LatencyConfig(ttft_s=0.0, per_token_s=0.0, jitter_s=0.0))
    with SimServer(config, questions=bench.questions) as server:
        yield server
