"""What a run records of itself: one builder for infer, training and the holdout's runs."""

from __future__ import annotations

from pathlib import Path

from skillharness.agent.config import AgentConfig
from skillharness.data import source_sha256
from skillharness.data.split import Pool
from skillharness.llm.config import LLMConfig
from skillharness.store import RunKind, RunProvenance, content_hash

__all__ = ["inputs_hash", "run_provenance"]


def inputs_hash(config_fingerprint: str, questions_file: Path | None) -> str:
    """A run's ``config_hash``: the answer-relevant config and the questions' content.

    The questions are hashed too, so a resume over an edited file (same path, other rows) is
    refused instead of mixing two question sets in one run. A folder of per-task files (MVBench,
    MLVU) is hashed as the split hashes it: every file's name and content.
    """
    questions_sha = source_sha256(questions_file) if questions_file is not None else ""
    return content_hash({"config": config_fingerprint, "questions_sha256": questions_sha})


def run_provenance(
    *,
    run_id: str,
    kind: RunKind,
    config_hash: str,
    bundle_hash: str,
    pool: Pool | None,
    pools_sha256: str | None,
    llm: LLMConfig,
    agent: AgentConfig,
    parent_run_id: str | None = None,
) -> RunProvenance:
    """The provenance of a run asked through ``llm`` by an agent configured as ``agent``."""
    return RunProvenance(
        run_id=run_id,
        kind=kind,
        config_hash=config_hash,
        bundle_hash=bundle_hash,
        pools_sha256=pools_sha256,
        pool=pool,
        model=llm.model,
        endpoints=tuple(ep.base_url for ep in llm.endpoints),
        sampling=agent.sampling,
        parent_run_id=parent_run_id,
    )
