"""The report's holdout section shows Video-MME-v2's group score beside the per-question
accuracy, only when the stored holdout has one."""

from __future__ import annotations

from report_html import parse_page
from report_support import minimal_report_data

from group_support import group_report
from skillharness.data import Question
from skillharness.eval.report.holdout import holdout_rows
from skillharness.eval.report.render import render_html
from skillharness.store import Prediction, PredictionStatus


def _q(video: str, k: int, kind: str) -> Question:
    return Question(
        video_id=video,
        duration="all",
        videoID=video,
        question_id=f"{video}-{k}",
        task_type="Temporal Reasoning",
        question=f"Question {k} of {video}?",
        options=("A. one", "B. two"),
        answer="A",
        group_type=kind,  # type: ignore[arg-type]
        group_structure="[1, 2, 3, 4]",
    )


QUESTIONS = [_q("001", k, "relevance") for k in (1, 2, 3, 4)] + [_q("002", k, "logic") for k in (1, 2, 3, 4)]


def _preds(run: str, rights: str) -> list[Prediction]:
    return [
        Prediction(
            run_id=run,
            question_id=q.question_id,
            sample_idx=0,
            status=PredictionStatus.OK,
            answer="A" if r == "1" else "B",
            correct=r == "1",
        )
        for q, r in zip(QUESTIONS, rights, strict=True)
    ]


def _stored(with_groups: bool) -> dict[str, object]:
    """Final 001 all right (1), 002 k = 2 (4/16); baseline 001 one right (1/16), 002 k = 0."""
    final, baseline = _preds("f", "1111" + "1101"), _preds("b", "1000" + "0111")
    report = group_report(QUESTIONS, final, baseline, with_groups=with_groups)
    return report.model_dump(mode="json")


def _page(stored: dict[str, object]):
    return parse_page(render_html(minimal_report_data(holdout_raw=stored, holdout_rows=holdout_rows(stored))))


def test_the_page_shows_the_group_score_beside_the_accuracy() -> None:
    page = _page(_stored(with_groups=True))
    rows = [
        [cell.text.strip() for cell in r.find_all("td")] for r in page["group-score-table"].find_all("tr")
    ]
    accuracy, groups = ([cell.split(" [")[0] for cell in row] for row in rows[1:3])
    assert accuracy[:4] == ["per-question accuracy", "8 questions", "87.5%", "50.0%"]  # 7/8 and 4/8 right
    assert groups == ["group score", "2 groups", "62.5%", "3.1%", "+59.4 pt"]
    assert all(" [" in cell for cell in rows[2][2:]), "every number keeps its interval"


def test_no_group_score_section_without_groups() -> None:
    page = _page(_stored(with_groups=False))
    assert "group-score-table" not in page.by_id
    assert "group-scores" not in page.by_id
