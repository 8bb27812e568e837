"""Fixtures for end-to-end inference: a synthetic benchmark, its frozen split, a bundle, a simulator."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bench_support import Bench, make_bench
from skillharness.sim import LatencyConfig, SimConfig, SimServer


@pytest.fixture(scope="session")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Bench:
    return make_bench(tmp_path_factory.mktemp("infer-bench"))


@pytest.fixture
def sim(bench: Bench) -> Iterator[SimServer]:
    config = SimConfig(seed=3, latency=LatencyConfig(ttft_s=0.02, per_token_s=0.0, jitter_s=0.0))
    with SimServer(config, questions=bench.questions) as server:
        yield server
