"""Fixtures for the gate tests: configs and the binomial margin for Monte Carlo rates."""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest


def _binomial_margin(p: float, runs: int, z: float = 3.0) -> float:
    """``z`` standard errors of an observed rate whose true value is at most ``p``."""
    return z * math.sqrt(p * (1 - p) / runs)


@pytest.fixture
def margin() -> Callable[[float, int], float]:
    """Monte Carlo slack for rate bounds: three binomial standard errors."""
    return _binomial_margin
