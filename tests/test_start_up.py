"""A command's start-up imports what the command needs: ``infer`` and ``train`` do not pay for
scipy.stats or matplotlib (together about two thirds of a command's import time) before they use
them, nor for redis-py without a Redis cache (docs/benchmarks.md, "infer_e2e")."""

from __future__ import annotations

import subprocess
import sys

import pytest

HEAVY = ("scipy.stats", "matplotlib", "redis")


@pytest.mark.parametrize(
    "module", ["skillharness.commands.infer", "skillharness.commands.train", "skillharness.cli"]
)
def test_a_command_module_imports_no_heavy_library(module: str) -> None:
    probe = f"import sys, {module}; print(','.join(m for m in {HEAVY!r} if m in sys.modules))"
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == ""


def test_the_probe_sees_a_heavy_import() -> None:
    probe = (
        "import sys, skillharness.eval.report.plots as p; p._figure(1, 1); print('matplotlib' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "True"


TRAINING = ("skillharness.train.loop.training", "skillharness.eval.holdout", "skillharness.train.gate")


def test_infer_does_not_import_training_for_its_config() -> None:
    """``skillharness.config`` reads ``train.config`` and ``eval.config`` only: the packages' other
    names are imported when first read (util/lazy.py)."""
    probe = (
        f"import sys, skillharness.commands.infer; "
        f"print(','.join(m for m in {TRAINING!r} if m in sys.modules))"
    )
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == ""
    probe = (
        "import skillharness.train as t, sys; t.run_training; "
        "print('skillharness.train.loop.training' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "True"


def test_a_lazy_package_refuses_a_name_it_does_not_offer() -> None:
    import skillharness.eval

    with pytest.raises(AttributeError, match="no attribute 'not_a_name'"):
        _ = skillharness.eval.not_a_name
