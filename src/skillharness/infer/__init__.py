"""Inference: run a bundle over a pool (the ``infer_adhoc`` baseline), resumably, with a summary.

Sits above skills (it runs a bundle) and below train and eval (which reuse it).
"""

from skillharness.infer.progress import RichProgress
from skillharness.infer.runner import (
    InferJob,
    InferResult,
    InferSettings,
    check_media,
    default_run_id,
    load_bundle,
    load_job,
    run_inference,
)
from skillharness.infer.session import Draw, RunSession, open_session
from skillharness.infer.summary import Cell, Scored, summarize, wilson

__all__ = [
    "Cell",
    "Draw",
    "InferJob",
    "InferResult",
    "InferSettings",
    "RichProgress",
    "RunSession",
    "Scored",
    "check_media",
    "default_run_id",
    "load_bundle",
    "load_job",
    "open_session",
    "run_inference",
    "summarize",
    "wilson",
]
