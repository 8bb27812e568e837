"""The rejection memory tells an idea shown harmful from one that was only under-tested."""

from __future__ import annotations

import json
from pathlib import Path

from evolve_support import Env

from skillharness.skills import EditSet, EditTarget, RefusalReason, initial_bundle
from skillharness.train.evolve.prompts import render_evolve_prompts
from skillharness.train.evolve.proposer import remember_refusal, remember_rejection
from skillharness.train.gate import Decision, DecisionKind
from skillharness.train.state.checkpoint import CHECKPOINT_FILE, Checkpoint
from skillharness.train.state.records import (
    Candidate,
    GateOutcome,
    GateReason,
    Refused,
    RejectedEdit,
    Standing,
)


def _candidate(rule: str) -> Candidate:
    edit_set = EditSet(skill_update_mode="rewrite", edits=(), body=f"- {rule}\n", rationale=f"Idea: {rule}")
    return Candidate(EditTarget.system(), edit_set, initial_bundle(), "before", "after", "only")


def _outcome(reason: GateReason, kind: DecisionKind, wins: int, losses: int, n: int) -> GateOutcome:
    decision = Decision(kind, 1.0, 1.0, 20.0, n, wins, losses, n - wins - losses, 0, 1, n)
    return GateOutcome(reason=reason, detail=f"{reason.value} after {n} observations", decision=decision)


def _memory() -> list[RejectedEdit]:
    refused = Refused(EditTarget.system(), RefusalReason.ANCHOR_ABSENT, "edit 0: no such text")
    return [
        remember_rejection(
            _candidate("Harmful idea."),
            _outcome(GateReason.REJECT_EVIDENCE, DecisionKind.REJECT_EVIDENCE, 2, 9, 20),
        ),
        remember_rejection(
            _candidate("Promising idea."),
            _outcome(GateReason.REJECT_INERTIA, DecisionKind.CONTINUE, 6, 4, 24),
        ),
        remember_rejection(
            _candidate("Guarded idea."), _outcome(GateReason.REJECT_GUARD, DecisionKind.ACCEPT, 11, 1, 14)
        ),
        remember_refusal(refused),
    ]


def _section(text: str, heading: str) -> str:
    """The text under ``### heading`` up to the next ``##``/``###`` heading."""
    start = text.index(f"### {heading}")
    rest = text[start + 4 :]
    ends = [i for i in (rest.find("\n### "), rest.find("\n## ")) if i >= 0]
    return rest[: min(ends)] if ends else rest


def test_i5_memory_keeps_the_verdict_and_the_evidence_counts() -> None:
    harmful, unproven, guarded, refused = _memory()
    assert (harmful.verdict, harmful.standing) == (GateReason.REJECT_EVIDENCE, Standing.HARMFUL)
    assert (harmful.wins, harmful.losses, harmful.n) == (2, 9, 20)
    assert (unproven.verdict, unproven.standing) == (GateReason.REJECT_INERTIA, Standing.UNPROVEN)
    assert (unproven.wins, unproven.losses, unproven.n) == (6, 4, 24)
    assert (guarded.verdict, guarded.standing) == (GateReason.REJECT_GUARD, Standing.HARMFUL)
    assert (refused.verdict, refused.standing) == (GateReason.REJECT_INVALID, Standing.INVALID)
    assert refused.n is None
    assert "anchor_absent" in refused.outcome
    # Nothing drawn (an unreachable gate): the verdict stays, no counts are made up.
    bare = remember_rejection(_candidate("x"), GateOutcome(GateReason.REJECT_INERTIA, "unreachable"))
    assert (bare.standing, bare.n, bare.evidence) == (Standing.UNPROVEN, None, "")


def test_i5_rendered_evolve_prompt_lists_harmful_apart_from_unproven(env: Env) -> None:
    """Through the real evolve template: each entry sits under its own heading with its counts."""
    memory = _memory()
    prompt = env.runner.run(
        render_evolve_prompts(env.ctx, env.bundle, [env.pack], {env.pack.target.label(): memory})
    )[0]
    harmful = _section(prompt.user, "Shown harmful: do not repeat")
    unproven = _section(prompt.user, "Not yet proven: you may propose again, better targeted")
    refused = _section(prompt.user, "Refused before testing")
    assert "Idea: Harmful idea." in harmful
    assert "Idea: Guarded idea." in harmful
    assert "Evidence: 2 wins, 9 losses in 20 paired observations" in harmful
    assert "Promising idea" not in harmful
    assert "Idea: Promising idea." in unproven
    assert "Evidence: 6 wins, 4 losses in 24 paired observations" in unproven
    assert "Harmful idea" not in unproven
    assert "Guarded idea" not in unproven
    assert "reject_invalid: anchor_absent" in refused
    # Attempts keep their place in the memory (oldest first) whatever group they are shown in.
    assert "#### Rejected attempt 2" in unproven
    assert "#### Rejected attempt 4" in refused
    # The rules tell the proposer what each group means.
    assert "you may propose it again" in prompt.system


def test_i5_an_old_checkpoints_memory_loads_with_its_verdict_read_from_the_outcome(tmp_path: Path) -> None:
    ckpt = Checkpoint(run_id="r", baseline_run_id="r.baseline")
    data = ckpt.model_dump(mode="json")
    data["rejected"] = {  # entries as written before verdicts and counts were kept
        "system": [
            {"rationale": "a", "edits_json": "{}", "outcome": "reject_evidence: worse after 20 observations"},
            {"rationale": "b", "edits_json": "{}", "outcome": "reject_inertia: the draws ran out"},
            {"rationale": "c", "edits_json": "null", "outcome": "reject_invalid: malformed_json: x"},
        ]
    }
    (tmp_path / CHECKPOINT_FILE).write_text(json.dumps(data))
    loaded = Checkpoint.load(tmp_path).rejected["system"]
    assert [e.standing for e in loaded] == [Standing.HARMFUL, Standing.UNPROVEN, Standing.INVALID]
    assert all(e.n is None for e in loaded)
    # Saved again, the verdict is stored and the checkpoint still round-trips.
    Checkpoint.load(tmp_path).save(tmp_path)
    again = Checkpoint.load(tmp_path).rejected["system"]
    assert again == loaded
    assert again[1].verdict is GateReason.REJECT_INERTIA
