"""The BaselineCache on a real SQLite store: keys, staleness after a skill edit, and no outage rows."""

from __future__ import annotations

from pathlib import Path

from skillharness.agent import Prediction, PredictionStatus
from skillharness.data import Question
from skillharness.skills import Bundle, EditSet, EditTarget, initial_bundle
from skillharness.store import RunStore
from skillharness.train.validate.baseline_cache import BaselineCache


def _question(qid: str, task_type: str) -> Question:
    return Question(
        video_id=qid[:3],
        duration="short",
        videoID=f"v{qid[:3]}",
        question_id=qid,
        task_type=task_type,
        question=f"Question {qid}?",
        options=("A. yes", "B. no"),
        answer="A",
    )


def _prediction(qid: str, s: int, status: PredictionStatus, correct: bool | None) -> Prediction:
    return Prediction(
        run_id="r.g0001.inc", question_id=qid, sample_idx=s, status=status, correct=correct, answer="A"
    )


def test_only_the_edited_class_goes_stale_and_an_outage_is_never_stored(tmp_path: Path) -> None:
    ocr, counting = _question("001-1", "OCR Problems"), _question("002-1", "Counting Problem")
    draws = [(ocr, 0), (ocr, 1), (counting, 0), (counting, 1)]
    predictions = [
        _prediction("001-1", 0, PredictionStatus.OK, True),
        _prediction("001-1", 1, PredictionStatus.PARSE_ERROR, False),
        _prediction("002-1", 0, PredictionStatus.OK, False),
        _prediction("002-1", 1, PredictionStatus.INFRA_ERROR, None),
    ]
    bundle = initial_bundle()
    with RunStore.open(f"sqlite:///{tmp_path / 'runs.sqlite'}") as store:
        cache = BaselineCache(store, "sampling-a", scope=None)
        assert cache.record(bundle, draws, predictions) == 3
        found = cache.lookup(bundle, draws)
        assert set(found) == {("001-1", 0), ("001-1", 1), ("002-1", 0)}  # the outage is not a sample
        assert [found[("001-1", 0)].correct, found[("001-1", 1)].correct] == [True, False]
        # Another sampling hash is another key: nothing matches.
        assert BaselineCache(store, "sampling-b", scope=None).lookup(bundle, draws) == {}
        # An accepted OCR edit moves only the OCR key; the counting sample is still served.
        target = EditTarget.skill("OCR Problems")
        body = bundle.skill("OCR Problems").body + "\nRead every sign twice.\n"
        edited = bundle.apply(
            target, EditSet(skill_update_mode="rewrite", edits=(), body=body, rationale="x")
        )
        assert isinstance(edited, Bundle)
        assert set(cache.lookup(edited, draws)) == {("002-1", 0)}


def test_a_private_scope_reads_back_only_its_own_samples(tmp_path: Path) -> None:
    ocr = _question("001-1", "OCR Problems")
    draws = [(ocr, 1), (ocr, 2)]
    predictions = [
        _prediction("001-1", 1, PredictionStatus.OK, True),
        _prediction("001-1", 2, PredictionStatus.OK, False),
    ]
    bundle = initial_bundle()
    with RunStore.open(f"sqlite:///{tmp_path / 'runs.sqlite'}") as store:
        BaselineCache(store, "sampling-a", scope="run-a").record(bundle, draws, predictions)
        own = BaselineCache(store, "sampling-a", scope="run-a").lookup(bundle, draws)
        assert set(own) == {(q.question_id, s) for q, s in draws}
        assert BaselineCache(store, "sampling-a", scope="run-b").lookup(bundle, draws) == {}
        assert BaselineCache(store, "sampling-a", scope=None).lookup(bundle, draws) == {}
        # Shared samples are not a private scope's either.
        BaselineCache(store, "sampling-a", scope=None).record(bundle, draws, predictions)
        assert BaselineCache(store, "sampling-a", scope="run-b").lookup(bundle, draws) == {}
