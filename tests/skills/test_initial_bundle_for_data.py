"""The initial bundle for a benchmark's own task types: a skill per task type the data holds, the
packaged one where it exists, a generic one otherwise, every one with the fixed answer format."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillharness.data import builtin_adapters, slugify
from skillharness.errors import SkillError
from skillharness.skills import Bundle, initial_bundle

MVBENCH = tuple(builtin_adapters()["mvbench"].task_names)  # its 20 tasks


def test_each_of_mvbenchs_twenty_tasks_gets_a_skill_with_the_fixed_answer_format(tmp_path: Path) -> None:
    packaged = initial_bundle()
    bundle = initial_bundle(MVBENCH)
    assert sorted(bundle.skills) == sorted(slugify(t) for t in MVBENCH)
    assert len(bundle.skills) == 20
    appendix = next(iter(packaged.skills.values())).appendix
    for task in MVBENCH:
        document = bundle.skill(task)
        assert document.appendix == appendix  # the answer format training never edits
        assert task in document.body  # the generic body names its task type
        assert document.momentum == ""
    assert bundle.system_prompt == packaged.system_prompt
    assert bundle.tools == packaged.tools
    bundle.save(tmp_path / "b")
    assert Bundle.load(tmp_path / "b").bundle_hash == bundle.bundle_hash  # a valid bundle on disk


def test_a_task_type_with_a_packaged_skill_keeps_it_and_one_class_is_enough() -> None:
    packaged = initial_bundle()
    mixed = initial_bundle(["Counting Problem", "Hand Gestures"])
    assert mixed.skill("Counting Problem") == packaged.skill("Counting Problem")
    assert "Hand Gestures" in mixed.skill("Hand Gestures").body
    assert sorted(initial_bundle(["Ego Activity"]).skills) == ["ego_activity"]  # EgoSchema: one class


def test_two_task_types_sharing_a_skill_file_are_refused_naming_both() -> None:
    with pytest.raises(
        SkillError, match=r"'OCR Problems' and 'OCR problems' share the skill file ocr_problems.md"
    ):
        initial_bundle(["OCR problems", "OCR Problems"])
    with pytest.raises(SkillError, match="at least one task type"):
        initial_bundle([])


def test_saving_with_prune_removes_a_skill_file_of_another_vocabulary(tmp_path: Path) -> None:
    folder = tmp_path / "bundle"
    initial_bundle().save(folder)  # Video-MME's twelve
    ego = initial_bundle(["Ego Activity"])
    ego.save(folder)
    assert len(Bundle.load(folder).skills) == 13  # without prune a stale skill would join the bundle
    ego.save(folder, prune=True)
    assert Bundle.load(folder).bundle_hash == ego.bundle_hash


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=40), min_size=1, max_size=5))
def test_any_task_type_names_give_a_valid_bundle_or_a_skill_error(names: list[str]) -> None:
    try:
        bundle = initial_bundle(names)
    except SkillError:
        return  # a clear refusal (a slug shared by two names, or text the document refuses)
    assert set(bundle.skills) == {slugify(n) for n in names}
    for name in names:
        assert bundle.skill(name).render().endswith(next(iter(initial_bundle().skills.values())).appendix)
