"""Fixtures of the training tests: a synthetic benchmark large enough for a few steps per epoch."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench_support import Bench, make_bench


@pytest.fixture(scope="session")
def train_bench(tmp_path_factory: pytest.TempPathFactory) -> Bench:
    return make_bench(tmp_path_factory.mktemp("train-bench"), seed=5, videos=30, sizes=(12, 12, 6))


@pytest.fixture
def experiment(tmp_path: Path) -> Path:
    return tmp_path / "experiment"
