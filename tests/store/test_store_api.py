"""The store's public surface; the reader and writer share the agent's record types."""

from __future__ import annotations

import skillharness.agent
import skillharness.store


def test_public_surface_is_pinned() -> None:
    assert skillharness.store.__all__ == sorted(skillharness.store.__all__)
    assert set(skillharness.store.__all__) == {
        "Prediction", "PredictionStatus", "RunInfo", "RunKind", "RunLog", "RunProvenance", "RunReader",
        "RunStatus", "StepRole", "StoreConfig", "TraceStep", "content_hash", "settings_changes",
        "BaselineSample", "DiagnosisRow", "DualMetricRow", "GateDecisionRow", "GateObservationRow",
        "LedgerRecord", "LLMEventRow", "RunMetric", "RunStore", "TrainStepRow", "replica_neutral",
        "run_id_problem", "writer_gone",
    }  # fmt: skip


def test_records_have_one_definition() -> None:
    assert skillharness.store.Prediction is skillharness.agent.Prediction
    assert skillharness.store.TraceStep is skillharness.agent.TraceStep
