"""``skillharness bundle init | check | diff`` as a new user runs them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

import skillharness.skills
from cli_support import command_app
from skillharness.commands import bundle as bundle_cmd
from skillharness.data import read_questions, slugify
from skillharness.errors import SkillError
from skillharness.skills import Bundle, initial_bundle

APP = command_app(bundle_cmd.register)


def test_init_check_diff(tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "b"
    result = runner.invoke(APP, ["bundle", "init", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert Bundle.load(out) == initial_bundle()
    assert initial_bundle().bundle_hash in result.output

    check = runner.invoke(APP, ["bundle", "check", str(out)])
    assert check.exit_code == 0, check.output
    assert "ok: 12 skills, 3 tools" in check.output

    same = runner.invoke(APP, ["bundle", "diff", str(out), str(out), "--plain"])
    assert "bundles are identical" in same.output

    other = tmp_path / "c"
    runner.invoke(APP, ["bundle", "init", "--out", str(other)])
    skill = other / "skills" / "counting_problem.md"
    skill.write_text(skill.read_text().replace("Do not double count", "Never double count"))
    diff = runner.invoke(APP, ["bundle", "diff", str(out), str(other), "--plain"])
    assert diff.exit_code == 0, diff.output
    assert "--- a/skills/counting_problem.md" in diff.output
    assert "+++ b/skills/counting_problem.md" in diff.output
    assert any(line.startswith("+") and "Never double count" in line for line in diff.output.splitlines())
    assert "1 file(s) differ" in diff.output


def test_init_refuses_to_overwrite_without_force(tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "b"
    runner.invoke(APP, ["bundle", "init", "--out", str(out)])
    (out / "system.md").write_text("my own prompt\n")
    again = runner.invoke(APP, ["bundle", "init", "--out", str(out)])
    assert isinstance(again.exception, SkillError)
    assert "--force" in str(again.exception)
    assert (out / "system.md").read_text() == "my own prompt\n"
    (out / "skills" / "stale_type.md").write_text("stale")
    forced = runner.invoke(APP, ["bundle", "init", "--out", str(out), "--force"])
    assert forced.exit_code == 0, forced.output
    assert Bundle.load(out) == initial_bundle()


def test_check_reports_missing_task_types(tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "b"
    runner.invoke(APP, ["bundle", "init", "--out", str(out)])
    (out / "skills" / "ocr_problems.md").unlink()
    result = runner.invoke(APP, ["bundle", "check", str(out)])
    assert isinstance(result.exception, SkillError)
    assert "OCR Problems" in str(result.exception)
    assert runner.invoke(APP, ["bundle", "check", str(out), "--partial"]).exit_code == 0


def test_check_notes_a_skill_for_no_task_type(tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "b"
    runner.invoke(APP, ["bundle", "init", "--out", str(out)])
    clean = runner.invoke(APP, ["bundle", "check", str(out)])
    assert "never shown to the agent" not in clean.output
    (out / "skills" / "counting.md").write_text((out / "skills" / "counting_problem.md").read_text())
    noted = runner.invoke(APP, ["bundle", "check", str(out)])
    assert noted.exit_code == 0, noted.output
    expected = "note: 1 skill(s) for no task type of Video-MME, never shown to the agent: counting"
    assert expected in noted.output


def test_init_and_check_for_the_task_types_of_a_questions_file(tmp_path: Path) -> None:
    """A benchmark with its own vocabulary (EgoSchema: one task type) gets a skill for it, and
    ``check`` checks a bundle against the file's task types, not Video-MME's."""
    rows = [
        {"q_uid": f"q{i}", "question": f"What did c do {i}?", **{f"option {k}": f"act {k}" for k in range(5)}}
        for i in range(3)
    ]
    (tmp_path / "questions.json").write_text(json.dumps(rows))
    (tmp_path / "subset_answers.json").write_text(json.dumps({f"q{i}": i % 5 for i in range(3)}))
    questions = ["--questions", str(tmp_path / "questions.json"), "--benchmark", "egoschema"]
    runner = CliRunner()
    out = tmp_path / "b"
    made = runner.invoke(APP, ["bundle", "init", "--out", str(out), *questions])
    assert made.exit_code == 0, made.output
    (task_type,) = {q.task_type for q in read_questions(tmp_path / "questions.json", "egoschema")}
    assert list(Bundle.load(out).skills) == [slugify(task_type)]
    assert runner.invoke(APP, ["bundle", "check", str(out), *questions]).exit_code == 0
    missing = runner.invoke(APP, ["bundle", "check", str(out)])  # against Video-MME's twelve
    assert isinstance(missing.exception, SkillError)
    # Re-made with --force for Video-MME, the other vocabulary's skill file is gone.
    assert runner.invoke(APP, ["bundle", "init", "--out", str(out), "--force"]).exit_code == 0
    assert Bundle.load(out) == initial_bundle()


def test_real_entry_point_prints_user_errors_and_exits_2(tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    (broken / "skills").mkdir(parents=True)
    (broken / "system.md").write_text("prompt\n")
    (broken / "tools.yaml").write_text("get_frames: a\nget_subtitles: b\nsubmit_answer: c\n")
    (broken / "skills" / "ocr_problems.md").write_text("no markers here\n")
    code = "from skillharness.cli import main; main()"
    proc = subprocess.run(
        [sys.executable, "-c", code, "bundle", "check", str(broken)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2
    assert "ocr_problems.md: missing marker" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_public_api_is_pinned() -> None:
    exported = skillharness.skills.__all__
    assert exported == sorted(exported, key=lambda name: (not name.isupper(), name))
    assert set(skillharness.skills.__all__) == {
        "APPENDIX_MARKER",
        "MOMENTUM_MARKER",
        "SKILLS_DIR",
        "SYSTEM_FILE",
        "TOOLS_FILE",
        "Bundle",
        "Edit",
        "EditLimits",
        "EditOp",
        "EditRecord",
        "EditSet",
        "EditTarget",
        "ExportError",
        "ExportFormat",
        "Manifest",
        "MomentumUpdate",
        "Refusal",
        "RefusalReason",
        "SkillDocument",
        "SkillFile",
        "VersionReason",
        "VersionRecord",
        "Workspace",
        "apply_edit_set",
        "apply_edit_set_to_text",
        "inserted_lines",
        "normalised_line",
        "with_line",
        "canonical_bytes",
        "content_hash",
        "initial_bundle",
        "parse_edit_set",
        "export_bundle",
        "load_export_source",
        "load_json_export",
        "read_skills_folder",
        "skill_name",
        "stray_skill_entries",  # what bundle check notes: skills/ entries never read
        "MANIFEST_FILE",  # a workspace's commit point: bundle check/diff name a workspace by it
    }
