"""Infrastructure failures never become training decisions (train/state/outage.py, diagnose's share rule)."""

from __future__ import annotations

import pytest

from skillharness.agent.records import Prediction, PredictionStatus
from skillharness.errors import ExcludedShareError
from skillharness.train.diagnose.diagnoser import DiagnosisReport, check_excluded_share
from skillharness.train.state.budget import TrainingStopped
from skillharness.train.state.outage import InfraOutage, check_infra
from skillharness.train.state.records import Cause


def _answers(ok: int, infra: int) -> list[Prediction]:
    good = [
        Prediction(run_id="r", question_id=f"q{i}", answer="A", correct=True, status=PredictionStatus.OK)
        for i in range(ok)
    ]
    bad = [
        Prediction(
            run_id="r",
            question_id=f"x{i}",
            status=PredictionStatus.INFRA_ERROR,
            error_class="TransientLLMError",
            error_message="gpu-a: HTTP 503 after 8 attempts",
        )
        for i in range(infra)
    ]
    return good + bad


def test_a_rollout_with_nothing_answered_is_an_outage_not_a_score_of_zero() -> None:
    with pytest.raises(InfraOutage) as caught:
        check_infra(_answers(0, 1), what="r.val.x", limit=0.5, retries=2)
    assert isinstance(caught.value, TrainingStopped)  # resumable: the runner keeps the checkpoint
    assert caught.value.context == {
        "reason": "infra_outage",
        "what": "r.val.x",
        "failed": 1,
        "asked": 1,
        "limit": 0.5,
        "errors": {"TransientLLMError": 1},
    }
    assert "gpu-a: HTTP 503" in str(caught.value)  # names the endpoint and the error


@pytest.mark.parametrize(
    ("ok", "infra", "outage"), [(10, 0, False), (5, 5, False), (4, 6, True), (0, 3, True)]
)
def test_infra_share_past_the_limit_is_an_outage(ok: int, infra: int, outage: bool) -> None:
    if outage:
        with pytest.raises(InfraOutage):
            check_infra(_answers(ok, infra), what="r", limit=0.5, retries=2)
    else:
        check_infra(_answers(ok, infra), what="r", limit=0.5, retries=2)


def _report(wrong: int, infra: int) -> DiagnosisReport:
    counts = {cause.value: 0 for cause in Cause} | {"wrong": wrong, Cause.INFRA.value: infra}
    return DiagnosisReport((), counts, 0, 0)


def test_the_excluded_share_is_judged_only_on_enough_cases() -> None:
    check_excluded_share(_report(5, 2), limit=0.25, min_excluded=5)  # 40 % of 5: noise, go on
    with pytest.raises(ExcludedShareError):
        check_excluded_share(_report(20, 6), limit=0.25, min_excluded=5)
    with pytest.raises(ExcludedShareError):  # the rule as it was: any share past the limit
        check_excluded_share(_report(5, 2), limit=0.25, min_excluded=1)
