"""Inference: run a bundle over a pool (the ``infer_adhoc`` baseline), resumably, with a summary.

Sits above skills (it runs a bundle) and below train and eval (which reuse it).
"""

from skillharness.infer.runner import InferJob, InferResult, default_run_id, load_job, run_inference
from skillharness.infer.summary import Cell, Scored, summarize, wilson

__all__ = [
    "Cell",
    "InferJob",
    "InferResult",
    "Scored",
    "default_run_id",
    "load_job",
    "run_inference",
    "summarize",
    "wilson",
]
