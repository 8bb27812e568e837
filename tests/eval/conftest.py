"""Fixtures for the holdout: a synthetic bench with a 48-question test pool, and a simulator."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bench_support import Bench, make_bench
from skillharness.sim import LatencyConfig, SimConfig, SimServer


@pytest.fixture(scope="session")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Bench:
    # 24 videos of 3 questions: 12 train, 12 val and 48 test questions.
    return make_bench(tmp_path_factory.mktemp("eval-bench"), videos=24, sizes=(4, 4, 16))


@pytest.fixture(scope="session")
def sim(bench: Bench) -> Iterator[SimServer]:
    config = SimConfig(seed=3, latency=LatencyConfig(ttft_s=0.0, per_token_s=0.0, jitter_s=0.0))
    with SimServer(config, questions=bench.questions) as server:
        yield server
