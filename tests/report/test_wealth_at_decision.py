"""The report's accepted edits show the wealth the ladder decided on, not the end of its stage."""

from __future__ import annotations

from skillharness.eval.report.collect import _gate_view
from skillharness.eval.report.plots import gates_svg
from skillharness.eval.report.render import micro_targets
from skillharness.store import GateDecisionRow, GateObservationRow


def _obs(i: int, wealth: float, arm: str = "target") -> GateObservationRow:
    return GateObservationRow(
        train_run_id="r",
        gate_index=3,
        draw_index=i,
        question_id=f"q{i}",
        task_type="OCR Problems",
        sample_idx=1,
        arm=arm,
        candidate=1,
        incumbent=0,
        wealth=wealth,
        harm_wealth=1.0,
    )


def test_an_accept_shows_the_wealth_at_its_decision_and_draws_the_rest_of_its_stage_lighter() -> None:
    # The ladder crossed 1/α = 20 at the 6th observation (wealth 21.6); its stage of 8 went on, and
    # the last two observations (losses) brought the wealth down to 7.9.
    wealths = [1.5, 2.3, 3.4, 5.1, 7.6, 21.6, 12.0, 7.9]
    observations = [_obs(i, w) for i, w in enumerate(wealths)]
    decision = GateDecisionRow(
        train_run_id="r",
        gate_index=3,
        epoch=1,
        step=0,
        target="skill:ocr_problems",
        reason="accept",
        detail="accept",
        evidence={"alpha": 0.05, "decision": {"wealth": 21.6, "n": 6, "wins": 6, "threshold": 20.0}},
        version_before="v0000",
        version_after="v0001",
        rationale="r",
        edits={},
        document_before="a\n",
        document_after="a\nb\n",
    )
    view = _gate_view(decision, observations, None)
    assert view.final_wealth == 7.9  # the end of the stage, below 1/α
    assert view.decision_wealth == 21.6 >= view.threshold == 20.0
    assert view.decided_at == 5
    svg = gates_svg([view])
    assert svg is not None
    assert "stroke-opacity: 0.3" in svg  # the part after the decision, lighter
    undecided = _gate_view(decision.model_copy(update={"evidence": {"alpha": 0.05}}), observations, None)
    assert undecided.decided_at is None
    assert "stroke-opacity: 0.3" not in (gates_svg([undecided]) or "")


def test_the_accepts_of_a_micro_class_trained_by_name_are_marked_apart() -> None:
    assert micro_targets({"micro_trained": ["OCR Problems"]}) == {"skill:ocr_problems"}
    assert micro_targets({"micro_trained": []}) == set()
    assert micro_targets(None) == set()  # a run from before, or one with no final metric yet
