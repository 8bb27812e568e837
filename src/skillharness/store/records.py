"""The records of the run store.

:class:`Prediction` and :class:`TraceStep` are defined by the agent (which produces them) and
re-exported here; this module adds the run's provenance and status.
"""

from __future__ import annotations

import re
from enum import StrEnum
from urllib.parse import urlsplit, urlunsplit

from pydantic import Field, field_validator

from skillharness import __version__
from skillharness.agent.records import Prediction, PredictionStatus, StepRole, TraceStep
from skillharness.data import Pool
from skillharness.llm.types import SamplingParams
from skillharness.util.canonical import content_hash
from skillharness.util.model import StrictModel

__all__ = [
    "Prediction",
    "PredictionStatus",
    "RunInfo",
    "RunKind",
    "RunProvenance",
    "RunStatus",
    "StepRole",
    "TraceStep",
    "content_hash",
    "public_endpoint",
    "run_id_problem",
]


class RunKind(StrEnum):
    INFER = "infer"
    TRAIN = "train"
    GATE = "gate"  # one arm of one gate's draws, a child of a training run
    EVAL = "eval"


class RunStatus(StrEnum):
    RUNNING = "running"
    FINISHED = "finished"
    FINISHED_WITH_ERRORS = "finished_with_errors"  # some infra errors, below infer.max_infra_share
    FAILED = "failed"
    INTERRUPTED = "interrupted"


def public_endpoint(url: str) -> str:
    """``url`` without user info, query or fragment: an endpoint as it may be recorded."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


# The store's rule for a run id: it names the run's folder (no "/", no ".." first) and its children.
_RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]*")
_RUN_ID_LONGEST = 200


def run_id_problem(run_id: str, *, longest: int = _RUN_ID_LONGEST) -> str | None:
    """Why ``run_id`` is no run id the store takes (at most ``longest`` characters), or None: checked
    by commands before anything is created, with the rule stated rather than a pattern."""
    if _RUN_ID.fullmatch(run_id) and len(run_id) <= longest:
        return None
    return f"a run id is 1 to {longest} letters, digits and . _ : - starting with a letter or digit"


class RunProvenance(StrictModel):
    """What a run was: written once when the run is created, compared on resume, never changed.

    Holds no secrets: endpoints are recorded without user info or query strings, and API keys
    never reach this object (the config holds only the name of their environment variable).
    """

    run_id: str = Field(min_length=1, max_length=_RUN_ID_LONGEST, pattern=f"^{_RUN_ID.pattern}$")
    kind: RunKind
    config_hash: str = Field(min_length=1, description="content_hash of the effective config.")
    bundle_hash: str = Field(min_length=1, description="The bundle's content hash.")
    pools_sha256: str | None = Field(None, description="sha256 of pools.json, when a pool is used.")
    pool: Pool | None = Field(None, description="val | test | train, or None for an ad-hoc question set.")
    model: str = Field(min_length=1)
    endpoints: tuple[str, ...] = Field(min_length=1)
    sampling: SamplingParams
    package_version: str = __version__
    parent_run_id: str | None = Field(
        None, description="The training run this run serves (its baseline, a gate arm, an eval)."
    )

    @field_validator("endpoints")
    @classmethod
    def _no_credentials(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(public_endpoint(url) for url in value)


class RunInfo(StrictModel):
    """A stored run: its provenance and what may change afterwards (status, end, counts)."""

    provenance: RunProvenance
    started_at: str
    ended_at: str | None
    status: RunStatus
    n_ok: int
    n_parse_error: int
    n_infra_error: int

    @property
    def run_id(self) -> str:
        return self.provenance.run_id
