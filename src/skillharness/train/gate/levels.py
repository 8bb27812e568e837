"""The run's level rule (``train.gate.alpha_spending``): the level each test of a run gets, and
the guarantee that holds over the run's accepts.

A run's tests are numbered ``t = 1, 2, ...`` in the order they open (``gates_run + 1``). Test ``t``
accepts when its wealth reaches ``n_candidates / alpha_t``:

- ``none``: ``alpha_t = alpha``; the expected number of false accepts is at most the sum of the
  levels of the opened tests;
- ``basel`` (``alpha * 6 / (pi^2 t^2)``) and ``geometric`` (``alpha / 2^t``): the levels sum to at
  most ``alpha``, so the chance of any false accept is at most ``alpha``;
- ``elond``: e-LOND (Xu and Ramdas, online multiple testing with e-values), ``alpha_t = alpha *
  gamma_t * (k_t + 1)`` with ``k_t`` the run's accepts recorded before test ``t`` opened and
  ``gamma`` the LOND sequence (:func:`lond_gamma`, summing to at most 1). The expected share of
  false accepts among the run's accepts (the false discovery rate) is at most ``alpha``, under any
  dependence between the tests. The proof is in docs/gate.md, "The run's level rule".
"""

from __future__ import annotations

import math

from skillharness.errors import ConfigError
from skillharness.train.config import GateConfig

__all__ = ["LOND_GAMMA_SCALE", "best_gate_alpha", "gate_alpha", "lond_gamma", "run_guarantee"]

# The LOND sequence's constant: sum_j gamma_j <= 1 (about 0.976: docs/gate.md; a test bounds it).
LOND_GAMMA_SCALE = 0.07720838
# j * gamma_j rises up to j = e^4 (about 54.6) and falls after it (docs/gate.md): the best level
# any test from t on can get is therefore found among t .. max(t, _LOND_PEAK).
_LOND_PEAK = 55


def lond_gamma(j: int) -> float:
    """``gamma_j = c log(max(j, 2)) / (j exp(sqrt(log j)))``, the usual LOND choice (1-based ``j``).

    Positive, decreasing, and summing to at most 1 over all ``j``: no horizon to choose, and a
    test's share of the level never reaches 0, however many tests a run opens.
    """
    if j < 1:
        raise ConfigError(f"gate_index must be >= 1, got {j}", field="gate_index")
    return LOND_GAMMA_SCALE * math.log(max(j, 2)) / (j * math.exp(math.sqrt(math.log(j))))


def gate_alpha(alpha: float, spending: str = "none", gate_index: int = 1, *, accepts: int = 0) -> float:
    """Level of the ``gate_index``-th test of a run (1-based) under the run's level rule.

    ``none``: every test gets ``alpha``. ``basel``: ``alpha * 6 / (pi^2 k^2)``. ``geometric``:
    ``alpha / 2^k``. ``elond``: ``alpha * gamma_k * (accepts + 1)``, where ``accepts`` is the
    number of the run's accepts recorded before the test opened (the other rules ignore it).
    """
    if gate_index < 1:
        raise ConfigError(f"gate_index must be >= 1, got {gate_index}", field="gate_index")
    if accepts < 0:
        raise ConfigError(f"accepts must be >= 0, got {accepts}", field="accepts")
    if spending == "none":
        return alpha
    if spending == "basel":
        return alpha * 6.0 / (math.pi**2 * gate_index**2)
    if spending == "geometric":
        return math.ldexp(alpha, -gate_index)  # alpha / 2^k without overflow for large k
    if spending == "elond":
        return alpha * lond_gamma(gate_index) * (accepts + 1)
    raise ConfigError(f"unknown alpha spending {spending!r}", field="gate.alpha_spending")


def best_gate_alpha(alpha: float, spending: str, gate_index: int) -> float:
    """The largest level any test numbered ``gate_index`` or later can get, whatever accepts come first.

    Without e-LOND the levels never grow, so it is ``gate_index``'s own. Under ``elond`` test ``j``
    has at most ``j - 1`` accepts before it, so its level is at most ``alpha * j * gamma_j``; that
    peaks at ``j = 55`` (and at ``j = 1``, the highest of all), so a test that cannot accept at this
    level can never accept, while one that cannot accept at its own level may after more accepts.
    """
    if spending != "elond":
        return gate_alpha(alpha, spending, gate_index)
    last = max(gate_index, _LOND_PEAK)
    return alpha * max(j * lond_gamma(j) for j in range(gate_index, last + 1))


def _percent(alpha: float) -> str:
    return f"{alpha * 100:.4g}%"


def run_guarantee(gate: GateConfig) -> str:
    """The one sentence that states what ``gate``'s settings guarantee over a run's accepts.

    The training run's final metrics (``alpha_spent.bound``), ``gate plan`` and the report show it.
    """
    if gate.rule != "eprocess":
        return f"none: the {gate.rule} rule bounds no error rate (a baseline for the ablations only)"
    if gate.alpha_spending == "none":
        return "per test: expected false accepts <= sum of alpha over the opened tests"
    if gate.alpha_spending == "elond":
        return f"run-wide: at most {_percent(gate.alpha)} of accepts are false, in expectation (e-LOND)"
    return "run-wide: P(any false accept) <= alpha"
