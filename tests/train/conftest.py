"""Fixtures of the training tests (the benchmark, ``train_bench``, is shared: tests/conftest.py)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from evolve_support import Env, evolve_env

# The report's page parser (tests/report/report_html.py), for the training tests that check what a
# run's report shows.
_REPORT_TESTS = str(Path(__file__).resolve().parents[1] / "report")
if _REPORT_TESTS not in sys.path:
    sys.path.append(_REPORT_TESTS)


@pytest.fixture
def experiment(tmp_path: Path) -> Path:
    return tmp_path / "experiment"


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Env]:
    """The evolve tests' bench, simulator and stores (evolve_support.py), built once per module."""
    yield from evolve_env(tmp_path_factory.mktemp("evolve"))
