"""Bad input read through an adapter: one DataError naming the row and the field, nothing half-loaded;
and every option count 2..10 in every answer form comes back as the right letter."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillharness.data import OPTION_LETTERS, Adapter, load_adapter, load_benchmark
from skillharness.errors import DataError


def _adapter(**changes: Any) -> Adapter:
    spec: dict[str, Any] = {
        "name": "probe",
        "format": "json",
        "video_id": "vid",
        "question_id": "qid",
        "question": "q",
        "task_type": {"constant": "Any"},
        "options": {"form": "list", "field": "opts"},
        "answer": {"field": "ans", "form": "text"},
        "clip": {"start": "s", "end": "e"},
    }
    spec.update(changes)
    return Adapter.model_validate(spec)


def _row(qid: str, **changes: Any) -> dict[str, Any]:
    row = {"vid": "v1", "qid": qid, "q": "Which?", "opts": ["red", "green", "blue"], "ans": "green"}
    return {**row, **changes}


def _load(tmp_path: Path, rows: list[dict[str, Any]], adapter: Adapter | None = None) -> Any:
    path = tmp_path / "q.json"
    path.write_text(json.dumps(rows))
    return load_benchmark(path, adapter or _adapter())


@pytest.mark.parametrize(
    ("bad", "needle"),
    [
        (_row("2", ans="purple"), "field 'answer': answer text 'purple' matches no option"),
        (_row("2", opts=["red", "red", "blue"], ans="blue"), "field 'options': duplicate option(s) ['red']"),
        (_row("2", opts=["red"], ans="red"), "field 'options': 1 option(s); a question needs 2 to 10"),
        (_row("2", opts=[f"o{i}" for i in range(11)], ans="o1"), "11 option(s); a question needs 2 to 10"),
        (_row("2", s=10, e=10), "field 'clip': clip window [10.0, 10.0] s: the start must be >= 0"),
        (_row("2", s=10, e=4), "field 'clip': clip window [10.0, 4.0] s"),
        (_row("2", s=-1, e=4), "field 'clip': clip window [-1.0, 4.0] s"),
        (_row("2", s="soon", e=4), "field 'clip': clip window needs two numbers"),
    ],
)
def test_a_bad_row_is_named_and_nothing_is_loaded(tmp_path: Path, bad: dict[str, Any], needle: str) -> None:
    with pytest.raises(DataError) as info:
        _load(tmp_path, [_row("1"), bad, _row("3")])
    message = str(info.value)
    assert "row 2 (question_id 2)" in message
    assert needle in message, message
    assert len(info.value.context["problems"]) == 1, "the good rows add no problem"


@pytest.mark.parametrize(
    ("form", "answer", "needle"),
    [
        ("index0", 3, "answer index 3 is out of range for 3 options (0-based: 0..2)"),
        ("index1", 0, "answer index 0 is out of range for 3 options (1-based: 1..3)"),
        ("index0", "two", "answer 'two' is not a whole number"),
        ("letter", "D", "answer 'D' is not among the option letters ('A', 'B', 'C')"),
        ("letter", None, "no answer: the answer is null"),
        ("index0", None, "no answer: the answer is null"),
        ("text", None, "no answer: the answer is null"),
        ("text", "  ", "no answer: the answer is empty"),
    ],
)
def test_an_answer_naming_no_option_is_named(tmp_path: Path, form: str, answer: Any, needle: str) -> None:
    adapter = _adapter(answer={"field": "ans", "form": form})
    with pytest.raises(DataError, match="row 1 ") as info:
        _load(tmp_path, [_row("1", ans=answer)], adapter)
    assert needle in str(info.value)


def test_an_answer_text_matching_two_options_is_ambiguous_even_when_duplicates_are_allowed(
    tmp_path: Path,
) -> None:
    adapter = _adapter(duplicate_options="allow")
    with pytest.raises(DataError, match=r"answer text 'red' matches 2 options \(ambiguous\)"):
        _load(tmp_path, [_row("1", opts=["red", "red", "blue"], ans="red")], adapter)


def test_a_file_of_another_layout_is_one_error_with_expected_and_found_fields(tmp_path: Path) -> None:
    rows = [{"video": "a", "question": "q?", "candidates": ["x", "y"], "answer": "x"} for _ in range(3)]
    with pytest.raises(DataError) as info:
        _load(tmp_path, rows, load_adapter("nextqa"))
    message = str(info.value)
    assert "does not fit adapter 'nextqa'" in message
    assert "expects fields: video, question, type, qid, a0, a1, a2, a3, a4, answer" in message
    found = "rows 1, 2, 3 (3 rows) have: video, question, candidates, answer"
    assert f"{found}; missing: type, qid, a0" in message
    assert info.value.context["expected"][0] == "video"
    assert "the rows fit the built-in adapter(s): mvbench (--benchmark mvbench)" in message
    with pytest.raises(DataError, match="row 1 has: foo; missing: vid, q, qid, opts, ans") as info:
        _load(tmp_path, [{"foo": 1}])
    assert "no built-in adapter fits either: describe the layout in an adapter YAML" in str(info.value)


def test_the_fit_error_names_the_built_in_adapter_the_rows_do_fit(tmp_path: Path) -> None:
    rows = [{"q_uid": "u1", "question": "q?", **{f"option {i}": f"o{i}" for i in range(5)}}]
    with pytest.raises(
        DataError, match=r"fit the built-in adapter\(s\): egoschema \(--benchmark egoschema\)"
    ):
        _load(tmp_path, rows, load_adapter("longvideobench"))


def test_a_folder_layout_needs_a_folder_with_matching_files(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="reads a folder of per-task files, not a file"):
        _load(tmp_path, [_row("1")], load_adapter("mvbench"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(DataError, match=r"no file matches \['1_plotQA.json'"):
        load_benchmark(tmp_path / "empty", load_adapter("mlvu"))


def test_one_row_missing_a_field_is_a_row_problem_listing_what_it_has(tmp_path: Path) -> None:
    broken = _row("2")
    del broken["opts"]
    needle = r"row 2 \(question_id 2\): missing field\(s\) opts \(has vid, qid, q, ans\)"
    with pytest.raises(DataError, match=needle):
        _load(tmp_path, [_row("1"), broken])


def test_an_answers_file_missing_ids_names_each_question(tmp_path: Path) -> None:
    adapter = _adapter(answer=None, answers={"file": "gold.json", "form": "index0"})
    (tmp_path / "gold.json").write_text(json.dumps({"1": 0}))
    with pytest.raises(DataError) as info:
        _load(tmp_path, [_row("1"), _row("2"), _row("3")], adapter)
    problems = info.value.context["problems"]
    assert [p.split("(question_id ")[1][:1] for p in problems] == ["2", "3"]
    assert "the answers file has no answer for question id '2'" in problems[0]


def test_answers_as_rows_joined_by_id(tmp_path: Path) -> None:
    adapter = _adapter(answer=None, answers={"file": "gold.csv", "id_field": "id", "answer_field": "letter"})
    (tmp_path / "gold.csv").write_text("id,letter\n2,c\n1,a\n")
    loaded = _load(tmp_path, [_row("1"), _row("2")], adapter)
    assert [q.answer for q in loaded.questions] == ["A", "C"]


def test_mixed_option_counts_in_one_file_are_legal(tmp_path: Path) -> None:
    rows = [_row("1", opts=["x", "y"], ans="y"), _row("2", opts=[f"o{i}" for i in range(10)], ans="o9")]
    loaded = _load(tmp_path, rows)
    assert [(len(q.options), q.answer) for q in loaded.questions] == [(2, "B"), (10, "J")]


def test_a_wrong_letter_prefix_is_named(tmp_path: Path) -> None:
    adapter = _adapter(options={"form": "list", "field": "opts", "prefixed": True}, answer={"field": "ans"})
    with pytest.raises(DataError, match=r"field 'options\[1\]': must start with its letter 'B', got 'C. y'"):
        _load(tmp_path, [_row("1", opts=["A. x", "C. y"], ans="A")], adapter)


@pytest.mark.parametrize(
    ("spec", "needle"),
    [
        ({"answer": None}, "give 'answer'"),
        ({"task_type": {"field": "t", "constant": "x"}}, "exactly one of field, constant"),
        ({"task_type": {"file_stem": True}}, "file_stem: true needs format 'folder'"),
        ({"options": {"form": "columns", "columns": ["a"]}}, "needs at least two names"),
        ({"name": "Bad Name"}, "use lower-case letters"),
        ({"question_id": {"template": "{n:03d}"}}, "use plain {field} slots"),
        ({"question_id": {"template": "id"}}, "names no field"),
    ],
)
def test_an_invalid_adapter_is_refused(spec: dict[str, Any], needle: str) -> None:
    with pytest.raises(ValueError, match=needle):
        _adapter(**spec)


def test_unknown_benchmark_and_bad_adapter_file(tmp_path: Path) -> None:
    with pytest.raises(DataError, match=r"unknown benchmark 'videome': give one of egoschema, .* videomme"):
        load_adapter("videome")
    bad = tmp_path / "mine.yaml"
    bad.write_text("format: xlsx\nvideo_id: v\n")
    with pytest.raises(DataError, match=r"mine.yaml: invalid adapter: format: "):
        load_adapter(bad)


_FORMS = ("letter", "index0", "index1", "text")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(count=st.integers(2, 10), data=st.data(), form=st.sampled_from(_FORMS), prefixed=st.booleans())
def test_any_option_count_and_answer_form_round_trips_to_the_right_letter(
    tmp_path_factory: pytest.TempPathFactory, count: int, data: st.DataObject, form: str, prefixed: bool
) -> None:
    correct = data.draw(st.integers(0, count - 1))
    texts = [f"option number {i}" for i in range(count)]
    letters = OPTION_LETTERS[:count]
    shown = [f"{letters[i]}. {t}" for i, t in enumerate(texts)] if prefixed else texts
    forms = {"letter": letters[correct].lower(), "index0": correct, "index1": correct + 1}
    answer = forms.get(form, texts[correct])
    adapter = _adapter(
        options={"form": "list", "field": "opts", "prefixed": prefixed}, answer={"field": "ans", "form": form}
    )
    (q,) = _load(tmp_path_factory.mktemp("p"), [_row("1", opts=shown, ans=answer)], adapter).questions
    assert q.answer == letters[correct]
    assert q.letters == letters
    assert q.option_text(q.answer) == texts[correct]


def test_an_answers_file_for_an_adapter_that_reads_answers_from_rows_is_refused(tmp_path: Path) -> None:
    """Ignored, it would score every question against the answers in the rows, not the file named."""
    other = tmp_path / "other.json"
    other.write_text("{}")
    path = tmp_path / "q.json"
    path.write_text(json.dumps([_row("1")]))
    with pytest.raises(DataError, match="reads each answer from its question row") as info:
        load_benchmark(path, _adapter(), other)
    assert info.value.context["file"] == str(other)
