"""The reference aggregations by name (``data.metric_rules``) and Video-MME-v2's group score
(``data.groups``), on hand-made answers whose expected values are worked out by hand below from
the upstream rules (lmms-eval v0.7.2, ``tasks/<task>/utils.py`` at ``cb45ac4d``), and against
re-typed copies of those rules (``upstream_oracles``) on generated answers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillharness.data import METRIC_RULES, Question, RuleInput, load_adapter, scored_groups
from skillharness.data.groups import group_score
from skillharness.errors import DataError
from upstream_oracles import mlvu_dev_aggregate, mvbench_aggregate, videomme_v2_overall_score

MLVU_TYPES = ("anomaly_reco", "count", "ego", "needle", "order", "plotQA", "topic_reasoning")
STRUCTURES = {"chain": "[1, 2, 3, 4]", "middle": "[1, [2, 3], 4]", "first": "[[1, 2], 3, 4]"}


def _q(
    video: str, k: int, task: str = "T", group: str | None = None, structure: str | None = None
) -> Question:
    return Question(
        video_id=video,
        duration="all",
        videoID=video,
        question_id=f"{video}-{k}",
        task_type=task,
        question=f"Question {k} about {video}?",
        options=("A. yes", "B. no"),
        answer="A",
        group_type=group,  # type: ignore[arg-type]
        group_structure=structure,
    )


def _value(rule: str, items: list[RuleInput], task_types: tuple[str, ...] = ()) -> float:
    found = METRIC_RULES[rule].parts(items, task_types)
    sums: dict[str, list[float]] = {s: [0.0, 0.0] for s in found.strata}
    for p in found.parts:
        sums[p.stratum][0] += p.numerator
        sums[p.stratum][1] += p.denominator
    return sum(n / d if d else 0.0 for n, d in sums.values()) / len(sums)


# --- the group score, case by case --------------------------------------------------------

# (type, structure, answers in group order, expected score): each expected value applies the
# upstream rule by hand. k is the run of right answers from question 1.
GROUP_CASES = [
    ("relevance", None, (1, 0, 1, 1), 9 / 16),  # 3 right: 3²/16
    ("relevance", None, (0, 0, 0, 0), 0.0),
    ("relevance", None, (1, 1, 1, 1), 1.0),
    ("logic", STRUCTURES["chain"], (1, 1, 0, 1), 4 / 16),  # k = 2; question 4 no longer counts
    ("logic", STRUCTURES["chain"], (0, 1, 1, 1), 0.0),  # k = 0: a chain broken at its root
    ("logic", STRUCTURES["middle"], (1, 0, 1, 1), 4 / 12),  # k = 1, question 3 right: k = 2
    ("logic", STRUCTURES["middle"], (1, 1, 1, 0), 7 / 12),  # k = 3
    ("logic", STRUCTURES["middle"], (0, 1, 1, 1), 0.0),  # k = 0: the bridge needs question 1
    ("logic", STRUCTURES["first"], (0, 1, 1, 1), 1 / 10),  # k = 0, question 2 right: k = 1
    ("logic", STRUCTURES["first"], (1, 0, 1, 1), 1 / 10),  # k = 1: no bridge above k = 0
    ("logic", STRUCTURES["first"], (1, 1, 1, 0), 5 / 10),  # k = 3
    ("logic", STRUCTURES["first"], (1, 1, 1, 1), 1.0),
]


@pytest.mark.parametrize(("kind", "structure", "answers", "expected"), GROUP_CASES)
def test_group_score_case_by_case(
    kind: str, structure: str | None, answers: tuple[int, ...], expected: float
) -> None:
    assert group_score(kind, structure, [bool(a) for a in answers]) == pytest.approx(expected)


def test_the_group_score_of_a_hand_made_run() -> None:
    """Six videos, one group each, the file holding them out of order. By hand, in 240ths:
    001 relevance 3 right: 9/16 = 135; 002 chain k=2: 4/16 = 60; 003 middle bridged to k=2:
    4/12 = 80; 004 first bridged to k=1: 1/10 = 24; 005 middle k=3: 7/12 = 140; 006 relevance
    all right: 240. Mean: 679 / 240 / 6 = 679/1440, 47.15 on upstream's ×100 scale."""
    plan = [
        ("001", "relevance", STRUCTURES["chain"], (1, 0, 1, 1)),
        ("002", "logic", STRUCTURES["chain"], (1, 1, 0, 1)),
        ("003", "logic", STRUCTURES["middle"], (1, 0, 1, 1)),
        ("004", "logic", STRUCTURES["first"], (0, 1, 1, 1)),
        ("005", "logic", STRUCTURES["middle"], (1, 1, 1, 0)),
        ("006", "relevance", None, (1, 1, 1, 1)),
    ]
    items = [
        RuleInput(_q(video, k, group=kind, structure=structure), 0, bool(answers[k - 1]))
        for video, kind, structure, answers in plan
        for k in (3, 1, 4, 2)  # the order of the file is not the group's order
    ]
    assert _value("group_score", items) == pytest.approx(679 / 1440)
    groups, left_out = scored_groups(items)
    assert left_out == 0
    assert {g.video: round(100 * g.score, 2) for g in groups} == {
        "001": 56.25, "002": 25.0, "003": 33.33, "004": 10.0, "005": 58.33, "006": 100.0,
    }  # fmt: skip


def test_a_group_missing_a_question_is_left_out_and_counted() -> None:
    whole = [RuleInput(_q("001", k, group="relevance"), 0, True) for k in (1, 2, 3, 4)]
    cut = [RuleInput(_q("002", k, group="relevance"), 0, False) for k in (1, 2, 3)]
    found = METRIC_RULES["group_score"].parts(whole + cut, ())
    assert [p.cluster for p in found.parts] == ["001"]
    assert found.left_out == 1


def test_a_group_is_reported_under_its_last_questions_task_type() -> None:
    items = [RuleInput(_q("001", k, task=f"T{k}", group="relevance"), 0, True) for k in (4, 2, 1, 3)]
    (part,) = METRIC_RULES["group_score"].parts(items, ()).parts
    assert part.label == "T4"


def test_each_sample_is_its_own_group() -> None:
    items = [RuleInput(_q("001", k, group="relevance"), s, s == 0) for s in (0, 1) for k in (1, 2, 3, 4)]
    groups, _ = scored_groups(items)
    assert sorted((g.sample, g.score) for g in groups) == [(0, 1.0), (1, 0.0)]


# --- the other rules, by hand --------------------------------------------------------------


def test_accuracy_is_right_over_all() -> None:
    items = [RuleInput(_q(f"v{i}", 1), 0, right) for i, right in enumerate([True, True, True, False, False])]
    assert _value("accuracy", items) == pytest.approx(3 / 5)


def test_answered_accuracy_leaves_empty_replies_out_of_the_denominator() -> None:
    # Two right, one wrong reply, two empty replies: 2 / 3 (MVBench), where accuracy says 2 / 5.
    shape = [(True, True), (True, True), (False, True), (False, False), (False, False)]
    items = [RuleInput(_q(f"v{i}", 1), 0, right, answered) for i, (right, answered) in enumerate(shape)]
    assert _value("answered_accuracy", items) == pytest.approx(2 / 3)
    assert _value("accuracy", items) == pytest.approx(2 / 5)


def test_macro_task_accuracy_averages_every_listed_type_an_absent_one_as_zero() -> None:
    # a: 2 of 4 right, b: 1 of 1, c listed with no question: (0.5 + 1 + 0) / 3 = 0.5.
    shape = [("a", True), ("a", True), ("a", False), ("a", False), ("b", True)]
    items = [RuleInput(_q(f"v{i}", 1, task), 0, right) for i, (task, right) in enumerate(shape)]
    assert _value("macro_task_accuracy", items, ("a", "b", "c")) == pytest.approx(0.5)
    assert _value("accuracy", items) == pytest.approx(3 / 5)


def test_a_task_type_outside_the_macro_list_is_a_data_error() -> None:
    with pytest.raises(DataError, match="task type 'z'"):
        METRIC_RULES["macro_task_accuracy"].parts([RuleInput(_q("v", 1, "z"), 0, True)], ("a",))


# --- against re-typed upstream aggregations ---------------------------------------------------

_flags = st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=40)


@settings(max_examples=60, deadline=None)
@given(_flags)
def test_answered_accuracy_is_mvbench_aggregate_results(flags: list[tuple[bool, bool]]) -> None:
    rows = [(answered and right, answered) for right, answered in flags]  # an empty reply is never right
    items = [RuleInput(_q(f"v{i}", 1), 0, right, answered) for i, (right, answered) in enumerate(rows)]
    upstream = [{"pred_answer": "A" if answered else "", "score": int(right)} for right, answered in rows]
    assert 100 * _value("answered_accuracy", items) == pytest.approx(mvbench_aggregate(upstream))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(MLVU_TYPES), st.booleans()), min_size=1, max_size=40))
def test_macro_task_accuracy_is_mlvu_aggregate_results_dev(rows: list[tuple[str, bool]]) -> None:
    items = [RuleInput(_q(f"v{i}", 1, task), 0, right) for i, (task, right) in enumerate(rows)]
    upstream = [{"task_type": t, "pred_answer": "A" if r else "B", "answer": "A"} for t, r in rows]
    assert 100 * _value("macro_task_accuracy", items, MLVU_TYPES) == pytest.approx(
        mlvu_dev_aggregate(upstream)
    )


_groups = st.lists(
    st.tuples(
        st.sampled_from([("relevance", STRUCTURES["chain"]), *(("logic", s) for s in STRUCTURES.values())]),
        st.tuples(*[st.booleans()] * 4),
        st.permutations([1, 2, 3, 4]),
    ),
    min_size=1,
    max_size=12,
)


@settings(max_examples=80, deadline=None)
@given(_groups)
def test_group_score_is_lmms_evals_overall_score(groups: list) -> None:
    items, upstream = [], []
    for index, ((kind, structure), answers, order) in enumerate(groups):
        video = f"{index:03d}"
        for k in order:
            items.append(RuleInput(_q(video, k, group=kind, structure=structure), 0, answers[k - 1]))
            upstream.append(
                {
                    "video_id": video,
                    "question_id": f"{video}-{k}",
                    "group_type": kind,
                    "group_structure": structure,
                    "score": int(answers[k - 1]),
                }
            )
    assert 100 * _value("group_score", items) == pytest.approx(videomme_v2_overall_score(upstream))


# --- names, checked when the adapter loads --------------------------------------------------


def _adapter(tmp_path: Path, metric: dict[str, object]) -> Path:
    raw = {
        "format": "json",
        "video_id": "video",
        "question": "question",
        "task_type": {"constant": "T"},
        "options": {"form": "list", "field": "candidates"},
        "answer": {"field": "answer", "form": "text"},
        "lmms_eval": {
            "task": "t",
            "prompt": "{question}\n{options}",
            "option": "{letter}. {text}",
            "max_new_tokens": 8,
            "extractor": "extract_mcq_answer",
            "metric": metric,
        },
    }
    path = tmp_path / "mine.yaml"
    path.write_text(json.dumps(raw), encoding="utf-8")  # JSON is YAML
    return path


def test_an_unknown_rule_fails_when_the_adapter_loads(tmp_path: Path) -> None:
    path = _adapter(tmp_path, {"name": "m", "rule": "harmonic_mean"})
    with pytest.raises(
        DataError, match=r"rule 'harmonic_mean' is not one of accuracy, answered_accuracy"
    ) as caught:
        load_adapter(path)
    assert str(path) in str(caught.value)


def test_a_macro_rule_without_its_task_types_fails_when_the_adapter_loads(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="list them in 'task_types'"):
        load_adapter(_adapter(tmp_path, {"name": "m", "rule": "macro_task_accuracy"}))


def test_every_builtin_adapter_names_a_known_rule() -> None:
    rules = {
        name: load_adapter(name).lmms_eval.metric.rule  # type: ignore[union-attr]
        for name in ("egoschema", "longvideobench", "mlvu", "mvbench", "nextqa", "videomme_v2")
    }
    assert rules == {
        "egoschema": "accuracy",
        "longvideobench": "accuracy",
        "mlvu": "macro_task_accuracy",
        "mvbench": "answered_accuracy",
        "nextqa": "accuracy",
        "videomme_v2": "group_score",
    }
    assert load_adapter("mlvu").lmms_eval.metric.task_types == MLVU_TYPES  # type: ignore[union-attr]
