"""eval layer: the holdout evaluation's settings (the evaluation itself is a later milestone)."""

from skillharness.eval.config import EvalConfig

__all__ = ["EvalConfig"]
