"""How a run's final status follows from its answers, and whose cache it may reuse."""

from __future__ import annotations

from skillharness.agent.records import Prediction, PredictionStatus
from skillharness.infer.cache_policy import cache_scope
from skillharness.infer.outcome import decide_outcome
from skillharness.llm.config import CacheConfig
from skillharness.store import RunStatus


def _prediction(i: int, status: PredictionStatus, error_class: str | None = None) -> Prediction:
    return Prediction.model_validate(
        {
            "run_id": "r",
            "question_id": f"q{i}",
            "sample_idx": 0,
            "task_type": "Counting Problem",
            "duration": "short",
            "answer": "B" if status is PredictionStatus.OK else None,
            "correct": status is PredictionStatus.OK,
            "status": status,
            "error_class": error_class,
            "prompt_tokens": 1,
            "completion_tokens": 1,
            "latency_s": 0.1,
            "n_steps": 1,
            "relevant_text_hash": "h" * 64,
        }
    )


def test_the_infra_share_decides_finished_with_errors_or_failed_at_the_threshold() -> None:
    ok = [_prediction(i, PredictionStatus.OK) for i in range(5)]
    infra = [_prediction(10 + i, PredictionStatus.INFRA_ERROR, "TransientLLMError") for i in range(5)]
    assert decide_outcome(ok, 5, 0.5).status is RunStatus.FINISHED
    at_limit = decide_outcome(ok + infra, 10, 0.5)
    assert at_limit.status is RunStatus.FINISHED_WITH_ERRORS
    over = decide_outcome(ok[:4] + infra, 9, 0.5)
    assert over.status is RunStatus.FAILED
    assert over.by_class == {"TransientLLMError": 5}
    assert "TransientLLMError 5" in over.describe("r")


def test_pairs_never_reached_count_against_the_run() -> None:
    outcome = decide_outcome([_prediction(0, PredictionStatus.OK)], 4, 0.5)
    assert outcome.status is RunStatus.FAILED
    assert outcome.by_class == {"not_asked": 3}


def test_a_configured_salt_wins_over_sharing_and_run_ids() -> None:
    assert cache_scope(CacheConfig(salt="team"), "run-1", 0.7).salt == "team"
    assert cache_scope(CacheConfig(), "run-1", 0.7).salt == "run-1"
    assert cache_scope(CacheConfig(), "run-1", 0.0).salt is None
    assert cache_scope(CacheConfig(share_across_runs=False), "run-1", 0.0).salt == "run-1"
    assert cache_scope(CacheConfig(share_across_runs=True), "run-1", 0.7).salt is None
    assert cache_scope(CacheConfig(), "run-1", None).salt == "run-1", "server default: assume > 0"
