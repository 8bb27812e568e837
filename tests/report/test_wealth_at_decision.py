"""The report's accepted edits show the wealth the ladder decided on, not the end of its stage."""

from __future__ import annotations

from report_html import parse_page
from report_support import minimal_report_data

from skillharness.eval.report.collect import _gate_view
from skillharness.eval.report.plots import gates_svg
from skillharness.eval.report.render import micro_targets, render_html
from skillharness.store import GateDecisionRow, GateObservationRow
from skillharness.train.state.records import BEFORE_TESTING


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


# The ladder crossed 1/α = 20 at the 6th observation (wealth 21.6); its stage of 8 went on, and the
# last two observations (losses) brought the wealth down to 7.9.
WEALTHS = [1.5, 2.3, 3.4, 5.1, 7.6, 21.6, 12.0, 7.9]


def _decision(**update: object) -> GateDecisionRow:
    return GateDecisionRow(
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
    ).model_copy(update=update)


def test_an_accept_shows_the_wealth_at_its_decision_and_draws_the_rest_of_its_stage_lighter() -> None:
    observations = [_obs(i, w) for i, w in enumerate(WEALTHS)]
    decision = _decision()
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


def test_the_gate_table_reads_without_contradictions() -> None:
    """Issue 49 item 6: the table showed the stage end's wealth beside the decision's elsewhere, its
    draws beside the observation count of the decision, "step -1" for an epoch end, and Σα above 1
    with no word on what it means."""
    view = _gate_view(_decision(step=-1), [_obs(i, w) for i, w in enumerate(WEALTHS)], None)
    alpha = {"sum": 1.3, "gates": 40, "accepts": 3, "bound": "the stated guarantee"}
    page = parse_page(render_html(minimal_report_data(gates=[view], alpha_spent=alpha)))
    cells = [c.text.strip() for c in page["gate-row-3"].find_all("td")]
    assert cells[2] == "end"
    assert cells[5].split() == ["8", "decided", "at", "6"]
    assert cells[9].split() == ["21.600", "stage", "end", "7.900"]
    assert "at its end" in page["edit-3"].find_all("h3")[0].text
    assert "wealth at decision" in page["gate-table"].text
    assert "above 1 it bounds no family-wise error" in page["alpha-sum"].text
    assert "selected on val" in page["epoch-end-note"].text
    assert "untested" not in page.by_id  # nothing was refused before testing
    declined = _decision(
        gate_index=4, reason="reject_invalid", evidence={BEFORE_TESTING: "rank_declined", "evolve_calls": 4}
    )
    refused = _gate_view(declined, [], None)
    assert (refused.reason, refused.untested_calls) == ("declined by rank", 4)
    both = parse_page(render_html(minimal_report_data(gates=[view, refused], alpha_spent=alpha)))
    assert "1 of them proposals never tested" in both["untested"].text
    assert "4 evolve calls" in both["untested"].text
    small = minimal_report_data(gates=[view], alpha_spent={**alpha, "sum": 0.3})
    assert "above 1" not in parse_page(render_html(small))["alpha-sum"].text


def test_an_accept_states_how_many_distinct_val_questions_it_rests_on() -> None:
    """Issue 48 item 4: what a claim rests on is stated beside it (draws add observations, not questions)."""
    observations = [_obs(i, w) for i, w in enumerate(WEALTHS)]
    evidence = {"alpha": 0.05, "distinct_questions": 5, "decision": {"wealth": 21.6, "n": 6, "wins": 6}}
    view = _gate_view(_decision(evidence=evidence), observations, None)
    assert view.distinct == 5
    page = parse_page(render_html(minimal_report_data(gates=[view])))
    assert "8 draws of 5 distinct val questions" in " ".join(page["accepted-edits"].text.split())
    older = _gate_view(_decision(), observations, None)  # a decision recorded before the count was kept
    assert older.distinct is None
    page = parse_page(render_html(minimal_report_data(gates=[older])))
    assert "distinct" not in page["accepted-edits"].text
