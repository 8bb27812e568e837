"""benchmarks/blind_choice.py: which proposals a blind choice among sampled ones tests."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from blind_choice import DESIGNS, KINDS, kind_of, tally
from skillharness.data import read_questions
from skillharness.data.synth_layout import synthetic_questions
from skillharness.sim.config import SimConfig
from skillharness.sim.world import World


def _world(synth_root: Path, **evolve: float) -> World:
    config = SimConfig.model_validate({"seed": 3, "evolve": evolve})
    return World(config, list(read_questions(*synthetic_questions(synth_root))))


def test_kinds_are_read_from_the_worlds_hidden_rules(synth_root: Path) -> None:
    world = _world(synth_root)
    task_type = sorted({q.task_type for q in world.questions.values()})[0]
    assert kind_of(world, "- " + world.insights_for(task_type)[0].wordings[-1], task_type) == "insight"
    assert kind_of(world, "- " + world.decoys_for(task_type)[0].canonical, task_type) == "decoy"
    assert kind_of(world, "- " + world.harmful[0].canonical, task_type) == "harmful"
    assert kind_of(world, "- Stay calm.", task_type) == "filler"


def test_each_design_tests_one_proposal_per_pack_and_alike_samples_make_the_designs_one(
    synth_root: Path,
) -> None:
    counts = tally(_world(synth_root), packs=60, seed=1)
    assert set(counts) == set(DESIGNS)
    assert all(sum(c.values()) == 60 and set(c) <= set(KINDS) for c in counts.values())
    # When every sample is the prompt's shared draw, the three samples are one proposal, so
    # every design tests the same thing.
    alike = tally(_world(synth_root, sample_alike=1.0), packs=60, seed=1)
    assert alike["first"] == alike["blind, distinct"] == alike["blind, all"]
