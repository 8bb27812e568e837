"""The workspace: versioned bundles, atomic manifest writes, recovery from crashes (audit P1-7)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from pydantic import ValidationError

from skillharness.errors import SkillError
from skillharness.skills import (
    Bundle,
    Edit,
    EditOp,
    EditRecord,
    EditSet,
    EditTarget,
    VersionReason,
    Workspace,
)
from skillharness.skills.workspace import MANIFEST_FILE, WORKSPACE_SCHEMA_VERSION

EDIT = EditSet(
    skill_update_mode="patch",
    edits=(Edit(op=EditOp.INSERT_AFTER, anchor="Read character by character;", text=" twice;"),),
    rationale="misread glyphs",
)


def _edited(bundle: Bundle) -> Bundle:
    result = bundle.apply(EditTarget.skill("ocr_problems"), EDIT)
    assert isinstance(result, Bundle)
    return result


def _record() -> EditRecord:
    return EditRecord(
        target=EditTarget.skill("OCR Problems"),
        reason=VersionReason.ACCEPTED,
        detail="wealth 21.3 >= 20",
        edit_set=EDIT,
        details={"epoch": 1, "step": 3},
    )


@pytest.fixture
def workspace(tmp_path: Path, default_bundle: Bundle) -> Workspace:
    return Workspace.create(tmp_path / "ws", default_bundle)


def test_create_commit_history_and_reopen(workspace: Workspace, default_bundle: Bundle) -> None:
    assert workspace.current_version == "v0000"
    new = _edited(default_bundle)
    assert workspace.commit(new, "v0000", _record()) == "v0001"
    reopened = Workspace.open(workspace.path)
    assert reopened.current_version == "v0001"
    assert reopened.current() == new
    assert reopened.load("v0000") == default_bundle
    first, second = reopened.history()
    assert (first.parent, second.parent) == (None, "v0000")
    assert second.edit == _record()
    assert second.bundle_hash == new.bundle_hash
    assert second.relevant_hashes == new.relevant_hashes()
    assert reopened.recovered == ()
    manifest = json.loads((workspace.path / MANIFEST_FILE).read_text())
    assert manifest["schema_version"] == WORKSPACE_SCHEMA_VERSION == 2
    assert manifest["current"] == "v0001"


def test_revert_moves_current_and_keeps_history(workspace: Workspace, default_bundle: Bundle) -> None:
    workspace.commit(_edited(default_bundle), "v0000", _record())
    workspace.revert("v0000")
    reopened = Workspace.open(workspace.path)
    assert reopened.current_version == "v0000"
    assert len(reopened.history()) == 2
    assert reopened.commit(default_bundle, "v0000", _record()) == "v0002"
    with pytest.raises(SkillError, match="no version 'v0099'"):
        reopened.revert("v0099")
    with pytest.raises(SkillError, match="no version"):
        reopened.commit(default_bundle, "v0042", _record())


def test_create_refuses_a_non_empty_folder(tmp_path: Path, default_bundle: Bundle) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "notes.txt").write_text("mine")
    with pytest.raises(SkillError, match="not an empty folder"):
        Workspace.create(tmp_path / "ws", default_bundle)
    with pytest.raises(SkillError, match="not a workspace"):
        Workspace.open(tmp_path / "ws")


def test_p1_7_manifest_write_is_atomic(
    workspace: Workspace, default_bundle: Bundle, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A failure between the temp manifest write and its rename leaves the previous version."""
    before = (workspace.path / MANIFEST_FILE).read_bytes()
    real_replace = os.replace

    def failing_replace(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
        if Path(dst).name == MANIFEST_FILE:
            assert Path(src).read_bytes().startswith(b"{")  # the temp file was fully written
            raise OSError(28, "No space left on device")
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(OSError, match="No space"):
        workspace.commit(_edited(default_bundle), "v0000", _record())
    monkeypatch.setattr(os, "replace", real_replace)
    assert (workspace.path / MANIFEST_FILE).read_bytes() == before
    assert workspace.current_version == "v0000"
    assert not (workspace.path / "v0001").exists()  # the failed commit cleaned up after itself
    reopened = Workspace.open(workspace.path)
    assert reopened.current_version == "v0000"
    assert reopened.recovered == ()
    assert sorted(p.name for p in workspace.path.iterdir()) == [MANIFEST_FILE, "v0000"]
    assert reopened.commit(_edited(default_bundle), "v0000", _record()) == "v0001"


_CHILD = textwrap.dedent(
    """
    import os, signal, sys
    from pathlib import Path
    from skillharness.skills import EditRecord, EditTarget, VersionReason, Workspace, parse_edit_set

    ws = Workspace.open(sys.argv[1])
    victim = sys.argv[2]
    for name in ("replace", "rename"):
        real = getattr(os, name)
        def killing(src, dst, _real=real):
            if Path(dst).name == victim or Path(dst).name.startswith(victim):
                os.kill(os.getpid(), signal.SIGKILL)  # die between the temp write and the rename
            return _real(src, dst)
        setattr(os, name, killing)
    edit = parse_edit_set(sys.argv[3])
    target = EditTarget.skill("ocr_problems")
    bundle = ws.current().apply(target, edit)
    record = EditRecord(target=target, reason=VersionReason.MANUAL, edit_set=edit)
    ws.commit(bundle, ws.current_version, record)
    """
)


@pytest.mark.parametrize(
    ("victim", "leftover_prefix"), [(MANIFEST_FILE, f".{MANIFEST_FILE}."), ("v0001", ".tmp-v0001-")]
)
def test_p1_7_sigkill_between_temp_write_and_rename(
    workspace: Workspace, victim: str, leftover_prefix: str
) -> None:
    """A real child process killed mid-commit: reopening recovers the previous version."""
    before = (workspace.path / MANIFEST_FILE).read_bytes()
    child = subprocess.run(
        [sys.executable, "-c", _CHILD, str(workspace.path), victim, EDIT.model_dump_json()],
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert child.returncode == -signal.SIGKILL, child.stderr.decode()
    names = [p.name for p in workspace.path.iterdir()]
    assert any(n.startswith(leftover_prefix) for n in names), names  # the crash left debris
    assert (workspace.path / MANIFEST_FILE).read_bytes() == before
    reopened = Workspace.open(workspace.path)
    assert reopened.current_version == "v0000"
    assert any(r.startswith(leftover_prefix) for r in reopened.recovered)
    assert sorted(p.name for p in workspace.path.iterdir()) == [MANIFEST_FILE, "v0000"]
    assert Workspace.open(workspace.path).recovered == ()


def test_tampered_version_is_named(workspace: Workspace, default_bundle: Bundle) -> None:
    workspace.commit(_edited(default_bundle), "v0000", _record())
    skill = workspace.path / "v0001" / "skills" / "ocr_problems.md"
    skill.write_text(skill.read_text().replace("twice", "thrice"))
    with pytest.raises(SkillError, match="version v0001 does not match") as info:
        Workspace.open(workspace.path)
    assert info.value.context["version"] == "v0001"
    skill.unlink()
    with pytest.raises(SkillError, match="v0001"):
        Workspace.open(workspace.path)


def test_extra_skill_file_is_a_mismatch(workspace: Workspace) -> None:
    extra = workspace.path / "v0000" / "skills" / "extra_type.md"
    extra.write_text((workspace.path / "v0000" / "skills" / "ocr_problems.md").read_text())
    with pytest.raises(SkillError, match="v0000 bundle hash does not match"):
        Workspace.open(workspace.path)


def test_missing_version_folder_is_named(workspace: Workspace, default_bundle: Bundle) -> None:
    workspace.commit(default_bundle, "v0000", _record())
    os.rename(workspace.path / "v0001", workspace.path / "elsewhere")
    with pytest.raises(SkillError, match="version v0001 is in the manifest but its folder is missing"):
        Workspace.open(workspace.path)


@pytest.mark.parametrize(
    ("mutate", "words"),
    [
        (lambda m: m.update(schema_version=99), "schema_version"),
        (lambda m: m.update(current="v0007"), "current version 'v0007'"),
        (lambda m: m["versions"][0].update(version="v0003"), "is named 'v0003'"),
        (lambda m: m["versions"][0].update(parent="v0000"), "invalid parent"),
        (lambda m: m.update(surprise=1), "surprise"),
    ],
)
def test_inconsistent_manifest_is_refused(workspace: Workspace, mutate, words: str) -> None:  # type: ignore[no-untyped-def]
    path = workspace.path / MANIFEST_FILE
    manifest = json.loads(path.read_text())
    mutate(manifest)
    path.write_text(json.dumps(manifest))
    with pytest.raises(SkillError, match=r"manifest|version") as info:
        Workspace.open(workspace.path)
    assert words in str(info.value)


def test_truncated_manifest_is_a_clear_error(workspace: Workspace) -> None:
    path = workspace.path / MANIFEST_FILE
    path.write_bytes(path.read_bytes()[:40])
    with pytest.raises(SkillError, match="invalid manifest"):
        Workspace.open(workspace.path)


def test_p1_7_failure_after_the_manifest_landed_keeps_the_version(
    workspace: Workspace, default_bundle: Bundle, monkeypatch: pytest.MonkeyPatch
) -> None:
    """If the rename landed and only the final folder fsync failed, the commit stands."""
    import skillharness.util.atomic as atomic

    real_fsync_dir = atomic.fsync_dir

    def failing_fsync_dir(path: Path) -> None:
        if Path(path) == workspace.path:
            raise OSError(5, "I/O error")
        real_fsync_dir(path)

    monkeypatch.setattr(atomic, "fsync_dir", failing_fsync_dir)
    with pytest.raises(OSError, match="I/O error"):
        workspace.commit(_edited(default_bundle), "v0000", _record())
    monkeypatch.setattr(atomic, "fsync_dir", real_fsync_dir)
    reopened = Workspace.open(workspace.path)
    assert reopened.current_version == "v0001"
    assert reopened.current() == _edited(default_bundle)


def test_a_record_is_typed_and_an_unknown_reason_or_target_is_refused() -> None:
    record = _record()
    assert record.label() == "skill:ocr_problems"
    assert EditRecord.model_validate_json(record.model_dump_json()) == record
    with pytest.raises(ValidationError, match="reason"):
        EditRecord.model_validate({"target": None, "reason": 3})
    with pytest.raises(ValidationError, match="kind"):
        EditRecord.model_validate({"target": {"kind": "skills", "name": "ocr"}, "reason": "accepted"})
    with pytest.raises(ValidationError, match="target"):
        EditRecord.model_validate({"target": "skill:ocr_problems", "reason": "accepted"})


@pytest.mark.parametrize(
    ("target", "reason", "expected"),
    [
        ("initial", "initial bundle", (None, VersionReason.INITIAL, "initial bundle")),
        (
            "skill:ocr_problems",
            "accept: wealth 21.3 >= 20",
            (EditTarget.skill("OCR Problems"), VersionReason.ACCEPTED, "wealth 21.3 >= 20"),
        ),
        (
            "skill:ocr_problems",
            "slow momentum (ungated)",
            (EditTarget.skill("OCR Problems"), VersionReason.MOMENTUM, "slow momentum (ungated)"),
        ),
        ("tools:get_frames", "by hand", (EditTarget.tool("get_frames"), VersionReason.MANUAL, "by hand")),
    ],
)
def test_a_manifest_written_with_label_strings_still_opens(
    workspace: Workspace, default_bundle: Bundle, target: str, reason: str, expected: tuple[object, ...]
) -> None:
    workspace.commit(_edited(default_bundle), "v0000", _record())
    path = workspace.path / MANIFEST_FILE
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["schema_version"] = 1
    for version in doc["versions"]:
        version["edit"] = {"target": "initial", "reason": "initial bundle", "edit_set": None, "details": {}}
    doc["versions"][1]["edit"] = {
        "target": target,
        "reason": reason,
        "edit_set": EDIT.model_dump(mode="json"),
    }
    path.write_text(json.dumps(doc), encoding="utf-8")
    reopened = Workspace.open(workspace.path)
    edit = reopened.history()[1].edit
    assert (edit.target, edit.reason, edit.detail) == expected
    assert edit.edit_set == EDIT
    assert reopened.history()[0].edit.reason is VersionReason.INITIAL
    reopened.commit(_edited(reopened.current()), reopened.current_version, _record())  # written as schema 2
    assert json.loads(path.read_text(encoding="utf-8"))["schema_version"] == 2
    assert Workspace.open(workspace.path).history()[1].edit.detail == expected[2]


def test_a_reader_never_removes_what_a_writer_has_in_flight(
    workspace: Workspace, default_bundle: Bundle
) -> None:
    """eval, infer and the report read a workspace a training run may be committing to: a temp
    version, a renamed version not yet in the manifest and a temp manifest are left for the writer."""
    committed = sorted(p.name for p in workspace.path.iterdir())
    shutil.copytree(workspace.path / "v0000", workspace.path / ".tmp-v0001-deadbeef")
    shutil.copytree(workspace.path / "v0000", workspace.path / "v0001")
    (workspace.path / f".{MANIFEST_FILE}.abc.tmp").write_text("{}")
    in_flight = sorted(p.name for p in workspace.path.iterdir())
    read = Workspace.read(workspace.path)
    assert read.current_version == "v0000"
    assert read.current().bundle_hash == default_bundle.bundle_hash
    assert read.recovered == ()
    assert sorted(p.name for p in workspace.path.iterdir()) == in_flight
    assert len(Workspace.open(workspace.path).recovered) == 3  # the writer's own open recovers them
    assert sorted(p.name for p in workspace.path.iterdir()) == committed
