"""The protocol names, apart from the turn builder so the extractors can key on them without an
import cycle (the turn builder imports the per-benchmark extractors)."""

from __future__ import annotations

from enum import StrEnum

__all__ = ["ProtocolName"]


class ProtocolName(StrEnum):
    """Whose request the agent sends: ours (the tool-using agent) or a reference evaluation's."""

    SKILLHARNESS = "skillharness"
    LMMS_EVAL = "lmms_eval"
    VLMEVALKIT = "vlmevalkit"
    OFFICIAL = "official"
