"""The training ledger: one declaration per record kind, upserts keyed by primary key (P2-3)."""

from __future__ import annotations

import pytest

from skillharness.errors import StoreError
from skillharness.store import (
    BaselineSample,
    DiagnosisRow,
    GateDecisionRow,
    GateObservationRow,
    RunReader,
    RunStore,
)


def _diagnosis(cause: str = "defect", retryable: bool = False) -> DiagnosisRow:
    return DiagnosisRow(
        fingerprint="fp-1",
        run_id="r",
        question_id="q1",
        sample_idx=0,
        task_type="OCR Problems",
        cause=cause,
        target="skill:OCR Problems",
        reason="because",
        retryable=retryable,
    )


def test_p2_3_ledger_upserts_replace_rows_without_duplicates(store_url: str) -> None:
    with RunStore.open(store_url) as store:
        store.upsert([_diagnosis("judge_failed", retryable=True)])
        store.upsert([_diagnosis("defect")])
        store.upsert([_diagnosis("defect"), _diagnosis("lapse")])  # last of a key wins in one batch
        rows = store.select(DiagnosisRow)
    assert len(rows) == 1
    assert rows[0].cause == "lapse"
    assert rows[0].retryable is False


def test_json_fields_round_trip_and_reader_sees_them(store_url: str) -> None:
    decision = GateDecisionRow(
        train_run_id="t",
        gate_index=3,
        epoch=0,
        step=1,
        target="skill:OCR Problems",
        reason="accept",
        detail="wealth 21.3 ≥ 20",
        evidence={"wealth": 21.3, "n": 40, "guard": None},
        version_before="v0001",
        version_after="v0002",
        rationale="adds a rule",
        edits={"skill_update_mode": "patch", "edits": [{"op": "insert_after", "anchor": "a", "text": "«b»"}]},
        document_before="a",
        document_after="a«b»",
    )
    observations = [
        GateObservationRow(
            train_run_id="t",
            gate_index=3,
            draw_index=i,
            question_id=f"q{i}",
            task_type="OCR Problems",
            sample_idx=0,
            arm="target",
            candidate=None if i == 1 else 1,
            incumbent=0,
            wealth=1.0 + i,
            harm_wealth=1.0,
        )
        for i in range(3)
    ]
    with RunStore.open(store_url) as store:
        store.upsert([decision, *observations])
    with RunReader(store_url) as reader:
        assert reader.ledger(GateDecisionRow, train_run_id="t") == [decision]
        stored = reader.ledger(GateObservationRow, train_run_id="t", gate_index=3)
        assert [o.draw_index for o in stored] == [0, 1, 2]
        assert stored[1].candidate is None
        with pytest.raises(StoreError, match="no column"):
            reader.ledger(BaselineSample, nonsense=1)
