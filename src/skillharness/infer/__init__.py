"""Inference: run a bundle over a pool (the ``infer_adhoc`` baseline), resumably, with a summary.

Sits above skills (it runs a bundle) and below train and eval (which reuse it).
"""

from skillharness.infer.config import InferConfig
from skillharness.infer.export import write_official_results
from skillharness.infer.outcome import single_error
from skillharness.infer.progress import InferProgress, RichProgress
from skillharness.infer.provenance import inputs_hash, run_provenance
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
from skillharness.infer.scoring import Parser, RunScores, parser_gap, score_run
from skillharness.infer.session import Draw, RunSession, open_session
from skillharness.infer.signals import SIGTERM_EXIT, Terminated, cancel_on_sigterm
from skillharness.infer.summary import Cell, Scored, summarize, wilson

__all__ = [
    "SIGTERM_EXIT",
    "Cell",
    "Draw",
    "InferConfig",
    "InferJob",
    "InferProgress",
    "InferResult",
    "InferSettings",
    "Parser",
    "RichProgress",
    "RunScores",
    "RunSession",
    "Scored",
    "Terminated",
    "cancel_on_sigterm",
    "check_media",
    "default_run_id",
    "inputs_hash",
    "load_bundle",
    "load_job",
    "open_session",
    "parser_gap",
    "run_inference",
    "run_provenance",
    "score_run",
    "single_error",
    "summarize",
    "wilson",
    "write_official_results",
]
