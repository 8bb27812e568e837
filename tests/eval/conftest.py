"""The evaluation tests train runs with the training tests' helpers (``train_support``): they import
them as the training tests do, as modules of tests/train, never as a package ``train`` (that name is
benchmarks/train.py's, which tests/test_benchmarks_simlab.py imports)."""

from __future__ import annotations

import sys
from pathlib import Path

_TRAIN_TESTS = str(Path(__file__).resolve().parents[1] / "train")
if _TRAIN_TESTS not in sys.path:
    sys.path.insert(0, _TRAIN_TESTS)
