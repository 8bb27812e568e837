"""Evolution: proposals of edits from case packs, and their rebase onto the incumbent."""

from __future__ import annotations

from skillharness.train.evolve.merge import merge_partner, merged_proposal, under_test, without_landed
from skillharness.train.evolve.prompts import edit_limits, render_evolve_prompts, target_text
from skillharness.train.evolve.proposer import (
    EvolveRefusal,
    evolve,
    evolve_all,
    remember,
    remember_refusal,
    remember_rejection,
)

__all__ = [
    "EvolveRefusal",
    "edit_limits",
    "evolve",
    "evolve_all",
    "merge_partner",
    "merged_proposal",
    "remember",
    "remember_refusal",
    "remember_rejection",
    "render_evolve_prompts",
    "target_text",
    "under_test",
    "without_landed",
]
