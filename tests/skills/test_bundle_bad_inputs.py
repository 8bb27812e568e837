"""Bundle folders, exports and JSON exports a demanding user hands the ``bundle`` commands: each is
one clear error naming the input (or a note), never a traceback, and nothing is overwritten."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli_support import command_app, run_cli
from skillharness.commands import bundle as bundle_cmd
from skillharness.errors import ExportError, SkillError
from skillharness.skills import Bundle, Workspace, load_json_export

APP = command_app(bundle_cmd.register)


def _invoke(*args: str) -> tuple[int, str, BaseException | None]:
    result = CliRunner().invoke(APP, ["bundle", *args])
    return result.exit_code, result.output, result.exception


def _tools(folder: Path, text: str) -> None:
    (folder / "tools.yaml").write_text(text, encoding="utf-8")


def test_a_duplicated_tool_is_one_line_naming_the_file_and_line(bundle_dir: Path) -> None:
    _tools(bundle_dir, "get_frames: a\nget_frames: b\nget_subtitles: c\nsubmit_answer: d\n")
    _, _, exc = _invoke("check", str(bundle_dir))
    assert isinstance(exc, SkillError)
    assert str(exc) == (
        f"{bundle_dir}/tools.yaml:2: invalid YAML: found the key 'get_frames' twice (first on line 1)"
    )


def test_a_tool_description_with_a_lone_surrogate_is_refused(bundle_dir: Path) -> None:
    # YAML's "\ud800" escape loads as a lone surrogate, which failed the bundle hash with a traceback.
    _tools(bundle_dir, 'get_frames: a\nget_subtitles: b\nsubmit_answer: "x \\ud800"\n')
    _, _, exc = _invoke("check", str(bundle_dir))
    assert isinstance(exc, SkillError), exc
    assert (
        str(exc)
        == f"{bundle_dir}/tools.yaml: tool 'submit_answer': the description is not valid Unicode text"
    )


def test_a_pipe_in_the_skills_folder_is_refused_not_waited_on(bundle_dir: Path) -> None:
    pipe = bundle_dir / "skills" / "ocr_problems.md"
    pipe.unlink()
    os.mkfifo(pipe)
    result = run_cli("bundle", "check", str(bundle_dir), timeout=60)
    assert result.returncode == 2, result.stderr
    assert f"error: {pipe}: not a regular file (a pipe or a device)" in result.stderr


def test_a_byte_order_mark_is_not_part_of_the_text(bundle_dir: Path, default_bundle: Bundle) -> None:
    for rel in ("system.md", "tools.yaml", "skills/ocr_problems.md"):
        file = bundle_dir / rel
        file.write_bytes(b"\xef\xbb\xbf" + file.read_bytes())
    loaded = Bundle.load(bundle_dir)
    assert loaded.bundle_hash == default_bundle.bundle_hash
    assert not loaded.system_prompt.startswith("\ufeff")


def test_check_notes_what_the_skills_folder_holds_but_never_reads(bundle_dir: Path) -> None:
    (bundle_dir / "skills" / "extra").mkdir()
    (bundle_dir / "skills" / "extra" / "my_skill.md").write_text("# Mine\n")
    (bundle_dir / "skills" / "notes.txt").write_text("x")
    (bundle_dir / "skills" / ".ocr_problems.md.swp").write_text("x")
    code, output, _ = _invoke("check", str(bundle_dir))
    assert code == 0, output
    assert "note: 2 entries in " in output
    assert "never read (only skills/<slug>.md files are skills): extra/, notes.txt" in output
    assert ".swp" not in output


def test_check_and_diff_name_a_workspace_as_one(tmp_path: Path, default_bundle: Bundle) -> None:
    ws = tmp_path / "ws"
    Workspace.create(ws, default_bundle)
    for args in (("check", str(ws)), ("diff", str(ws), str(ws / "v0000"))):
        _, _, exc = _invoke(*args)
        assert isinstance(exc, SkillError), exc
        assert str(exc) == f"{ws}: is a workspace, not a bundle folder; name one of its versions ({ws}/v0000)"


@pytest.mark.parametrize("out", ["system.md", "skills/new.md", "."])
def test_export_never_writes_into_its_source_bundle(bundle_dir: Path, out: str) -> None:
    before = {p: p.read_bytes() for p in bundle_dir.rglob("*") if p.is_file()}
    target = bundle_dir / out
    fmt = "skills" if out == "." else "prompt"
    _, _, exc = _invoke("export", str(bundle_dir), "--format", fmt, "--out", str(target), "--force")
    assert isinstance(exc, ExportError), exc
    assert "the folder the bundle is read from; write the export outside its source" in str(exc)
    assert {p: p.read_bytes() for p in bundle_dir.rglob("*") if p.is_file()} == before


@pytest.mark.parametrize("source", ["ws", "ws/v0000"])
def test_export_never_replaces_the_manifest_of_its_workspace(
    tmp_path: Path, default_bundle: Bundle, source: str
) -> None:
    ws = tmp_path / "ws"
    Workspace.create(ws, default_bundle)
    manifest = (ws / "manifest.json").read_bytes()
    out = ws / "manifest.json"
    _, _, exc = _invoke("export", str(tmp_path / source), "--format", "json", "--out", str(out), "--force")
    assert isinstance(exc, ExportError), exc
    assert f"--out {out}: lies in {ws.resolve()}, the folder the bundle is read from" in str(exc)
    assert (ws / "manifest.json").read_bytes() == manifest
    Workspace.read(ws)


def test_export_under_a_file_names_that_file(tmp_path: Path, bundle_dir: Path) -> None:
    (tmp_path / "taken").write_text("keep me")
    out = tmp_path / "taken" / "deeper" / "b.json"
    _, _, exc = _invoke("export", str(bundle_dir), "--format", "json", "--out", str(out))
    assert isinstance(exc, ExportError), exc
    assert str(exc) == f"--out {out}: {tmp_path / 'taken'} is a file, not a folder"
    assert (tmp_path / "taken").read_text() == "keep me"


def _edited_export(tmp_path: Path, bundle_dir: Path, edit: object) -> Path:
    out = tmp_path / "b.json"
    code, output, _ = _invoke("export", str(bundle_dir), "--format", "json", "--out", str(out))
    assert code == 0, output
    doc = json.loads(out.read_text(encoding="utf-8"))
    edit(doc)  # type: ignore[operator]
    out.write_text(json.dumps(doc), encoding="utf-8")
    return out


def test_a_hand_renamed_skill_in_a_json_export_names_the_entry(tmp_path: Path, bundle_dir: Path) -> None:
    def rename(doc: dict) -> None:
        doc["skills"]["OCR Problems"] = doc["skills"].pop("ocr_problems")

    path = _edited_export(tmp_path, bundle_dir, rename)
    with pytest.raises(ExportError) as caught:
        load_json_export(path)
    assert str(caught.value) == f"{path}: skills.OCR Problems: not a task-type slug (such as ocr_problems)"


def test_a_json_export_with_an_unknown_tool_names_the_entry(tmp_path: Path, bundle_dir: Path) -> None:
    path = _edited_export(
        tmp_path, bundle_dir, lambda doc: doc["tools"].update(zoom=doc["tools"]["get_frames"])
    )
    with pytest.raises(ExportError) as caught:
        load_json_export(path)
    assert str(caught.value).startswith(
        f"{path}: tools: must be exactly get_frames, get_subtitles, submit_answer"
    )


def test_a_hand_edited_relevant_hash_is_refused(tmp_path: Path, bundle_dir: Path) -> None:
    def stale(doc: dict) -> None:
        doc["skills"]["ocr_problems"]["relevant_hash"] = "0" * 64

    path = _edited_export(tmp_path, bundle_dir, stale)
    with pytest.raises(ExportError) as caught:
        load_json_export(path)
    assert str(caught.value).startswith(f"{path}: skills.ocr_problems: relevant_hash 000000000000 is not")
