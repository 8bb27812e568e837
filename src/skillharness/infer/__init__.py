"""Inference: run a bundle over a pool (the ``infer_adhoc`` baseline), resumably, with a summary.

Sits above skills (it runs a bundle) and below train and eval (which reuse it). It is also the
home of the paired and video-clustered statistics both of those report (``stats``, ``cluster``).
"""

from skillharness.infer.cache_policy import reuse_salt
from skillharness.infer.cluster import (
    SIGN_FLIPS,
    ClusteredMean,
    ClusteredPaired,
    cluster_bootstrap_interval,
    cluster_sign_flip_test,
    clustered_accuracy,
    clustered_paired,
    design_effect,
)
from skillharness.infer.config import InferConfig
from skillharness.infer.endpoints import probe_endpoints
from skillharness.infer.export import is_official_export, write_official_results
from skillharness.infer.outcome import single_error
from skillharness.infer.progress import InferProgress, RichProgress, short_name
from skillharness.infer.provenance import inputs_hash, run_provenance
from skillharness.infer.reference_score import ReferenceRow, ReferenceScore, reference_score
from skillharness.infer.runner import (
    InferJob,
    InferResult,
    InferSettings,
    check_agent_slot,
    check_media,
    default_run_id,
    load_bundle,
    load_job,
    run_inference,
)
from skillharness.infer.scoring import Parser, RunScores, parser_gap, score_run
from skillharness.infer.session import Draw, RunSession, open_session
from skillharness.infer.signals import SIGTERM_EXIT, Terminated, cancel_on_sigterm
from skillharness.infer.stats import (
    BOOTSTRAP_RESAMPLES,
    PairedTable,
    bootstrap_mean_interval,
    holm_adjust,
    mcnemar_exact,
    newcombe_paired_interval,
)
from skillharness.infer.summary import Cell, Scored, summarize, wilson

__all__ = [
    "BOOTSTRAP_RESAMPLES",
    "SIGN_FLIPS",
    "SIGTERM_EXIT",
    "Cell",
    "ClusteredMean",
    "ClusteredPaired",
    "Draw",
    "InferConfig",
    "InferJob",
    "InferProgress",
    "InferResult",
    "InferSettings",
    "PairedTable",
    "Parser",
    "ReferenceRow",
    "ReferenceScore",
    "RichProgress",
    "RunScores",
    "RunSession",
    "Scored",
    "Terminated",
    "bootstrap_mean_interval",
    "cancel_on_sigterm",
    "check_agent_slot",
    "check_media",
    "cluster_bootstrap_interval",
    "cluster_sign_flip_test",
    "clustered_accuracy",
    "clustered_paired",
    "default_run_id",
    "design_effect",
    "holm_adjust",
    "inputs_hash",
    "is_official_export",
    "load_bundle",
    "load_job",
    "mcnemar_exact",
    "newcombe_paired_interval",
    "open_session",
    "parser_gap",
    "probe_endpoints",
    "reference_score",
    "reuse_salt",
    "run_inference",
    "run_provenance",
    "score_run",
    "short_name",
    "single_error",
    "summarize",
    "wilson",
    "write_official_results",
]
