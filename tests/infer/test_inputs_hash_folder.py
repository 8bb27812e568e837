"""A run's inputs hash reads a per-task folder of questions (MVBench, MLVU) as the split does."""

from __future__ import annotations

from pathlib import Path

from skillharness.infer.provenance import inputs_hash


def test_a_folder_of_task_files_hashes_by_every_file_and_an_edit_changes_it(tmp_path: Path) -> None:
    folder = tmp_path / "json"
    folder.mkdir()
    (folder / "action_count.json").write_text("[]", encoding="utf-8")
    (folder / "scene_transition.json").write_text("[]", encoding="utf-8")
    before = inputs_hash("cfg", folder)
    assert before == inputs_hash("cfg", folder)
    (folder / "scene_transition.json").write_text("[{}]", encoding="utf-8")
    assert inputs_hash("cfg", folder) != before
