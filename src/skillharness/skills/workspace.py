"""An experiment's versioned bundles, safe against crashes at any point.

Layout::

    manifest.json    schema version, current version, history (parent, hashes, edit, why)
    v0000/ v0001/    one complete bundle folder per committed version

The manifest is the single commit point. A version folder is written completely under a temporary
name (``.tmp-vNNNN-*``) and renamed into place, and only then is the manifest replaced — atomically,
through :mod:`skillharness.util.atomic` (audit P1-7). A crash before the manifest write leaves at
most a temp folder or an uncommitted ``vNNNN`` folder; :meth:`Workspace.open` (the writer's)
removes both and verifies every committed version against the hashes in the manifest. One writer
at a time; every other command reads with :meth:`Workspace.read`, which removes nothing.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import uuid
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError

from skillharness.errors import SkillError
from skillharness.skills.bundle import Bundle, EditTarget
from skillharness.skills.edits import EditSet
from skillharness.skills.manifest_upgrade import upgrade_manifest
from skillharness.util.atomic import atomic_write_json, fsync_dir, sha256_bytes, sha256_file
from skillharness.util.model import StrictModel, describe_validation

__all__ = [
    "MANIFEST_FILE",
    "WORKSPACE_SCHEMA_VERSION",
    "EditRecord",
    "Manifest",
    "VersionReason",
    "VersionRecord",
    "Workspace",
]

MANIFEST_FILE = "manifest.json"
WORKSPACE_SCHEMA_VERSION = 2  # 2: edit records typed (1: label strings, read by upgrade_manifest)
_VERSION = re.compile(r"^v(\d{4,})$")
_TMP_PREFIX = ".tmp-"


class VersionReason(StrEnum):
    """Why a version exists."""

    INITIAL = "initial"  # the workspace's first version
    ACCEPTED = "accepted"  # a gate accepted the edit on val
    MOMENTUM = "momentum"  # slow momentum written without a gate (train.momentum.gated false)
    MANUAL = "manual"  # committed through the API by a person, not by training


class EditRecord(StrictModel):
    """The edit that produced a version and why it was kept."""

    target: EditTarget | None = Field(description="What was edited; None for the initial version.")
    reason: VersionReason
    detail: str = Field("", description="The evidence in words, e.g. the gate decision's wealth.")
    edit_set: EditSet | None = Field(None, description="The applied edit set, when there was one.")
    details: dict[str, Any] = Field(default_factory=dict, description="Free-form JSON details (step, epoch).")

    def label(self) -> str:
        """The target's label, ``initial`` for the first version."""
        return "initial" if self.target is None else self.target.label()


class VersionRecord(StrictModel):
    """One committed version in the manifest."""

    version: str
    parent: str | None
    created_at: str
    bundle_hash: str
    relevant_hashes: dict[str, str]
    files: dict[str, str] = Field(description="Relative path → sha256 of the file's bytes.")
    edit: EditRecord


class Manifest(StrictModel):
    """``manifest.json``: the workspace's single source of truth."""

    schema_version: Literal[2] = WORKSPACE_SCHEMA_VERSION
    current: str
    versions: tuple[VersionRecord, ...]


def _version_name(index: int) -> str:
    return f"v{index:04d}"


class Workspace:
    """A folder of versioned bundles. Use :meth:`create` or :meth:`open`, not the constructor."""

    def __init__(self, path: Path, manifest: Manifest, recovered: tuple[str, ...] = ()) -> None:
        self.path = path
        self._manifest = manifest
        self.recovered = recovered
        """What :meth:`open` cleaned up (leftover temp folders/files, uncommitted versions)."""

    # --- lifecycle ----------------------------------------------------------------------------
    @classmethod
    def create(cls, path: Path | str, initial_bundle: Bundle, *, reason: str = "initial bundle") -> Workspace:
        """Create a workspace whose ``v0000`` is ``initial_bundle``. ``path`` must be absent or empty."""
        root = Path(path)
        if root.exists() and (not root.is_dir() or any(root.iterdir())):
            raise SkillError(f"{root}: exists and is not an empty folder; refusing to create a workspace")
        root.mkdir(parents=True, exist_ok=True)
        record = _write_version(
            root,
            _version_name(0),
            None,
            initial_bundle,
            EditRecord(target=None, reason=VersionReason.INITIAL, detail=reason),
        )
        manifest = Manifest(current=record.version, versions=(record,))
        atomic_write_json(root / MANIFEST_FILE, manifest.model_dump(mode="json"))
        return cls(root, manifest)

    @classmethod
    def open(cls, path: Path | str, *, verify: bool = True) -> Workspace:
        """Open a workspace as its writer (the training run): clean up interrupted writes, then check
        the manifest against the folders.

        Raises:
            SkillError: no or unreadable manifest, an inconsistent history, or a version folder
                that is missing or whose content does not match its recorded hashes.
        """
        return cls._opened(Path(path), verify=verify, repair=True)

    @classmethod
    def read(cls, path: Path | str, *, verify: bool = True) -> Workspace:
        """Open a workspace to read it (eval, infer, a report): nothing is removed. What an
        interrupted write left may be a live training run's commit in flight; removing it would
        crash that run, or leave its manifest naming a folder that is gone. Only committed
        versions are read, so the leftovers change nothing here. Raises as :meth:`open`."""
        return cls._opened(Path(path), verify=verify, repair=False)

    @classmethod
    def _opened(cls, root: Path, *, verify: bool, repair: bool) -> Workspace:
        manifest_path = root / MANIFEST_FILE
        if not manifest_path.is_file():
            raise SkillError(
                f"{root}: not a workspace (no {MANIFEST_FILE}); if creating it was interrupted,"
                " remove the folder and create it again",
                file=str(manifest_path),
            )
        recovered = _clean_leftovers(root) if repair else []
        manifest = _read_manifest(manifest_path)
        if repair:
            recovered += _drop_uncommitted(root, manifest)
        workspace = cls(root, manifest, tuple(recovered))
        if verify:
            for record in manifest.versions:
                workspace._verify(record)
        return workspace

    # --- reading ------------------------------------------------------------------------------
    @property
    def manifest(self) -> Manifest:
        return self._manifest

    @property
    def current_version(self) -> str:
        return self._manifest.current

    def current(self) -> Bundle:
        """The bundle of the current version."""
        return self.load(self.current_version)

    def load(self, version: str) -> Bundle:
        """The bundle of any committed version."""
        self.record(version)
        return Bundle.load(self.path / version)

    def record(self, version: str) -> VersionRecord:
        """The manifest entry of ``version``."""
        for record in self._manifest.versions:
            if record.version == version:
                return record
        raise SkillError(f"{self.path}: no version {version!r} in the manifest", version=version)

    def history(self) -> tuple[VersionRecord, ...]:
        """Every committed version, oldest first."""
        return self._manifest.versions

    # --- writing ------------------------------------------------------------------------------
    def commit(self, bundle: Bundle, parent: str, edit: EditRecord) -> str:
        """Store ``bundle`` as a new version derived from ``parent``, make it current, return its name."""
        self.record(parent)
        name = _version_name(len(self._manifest.versions))
        record = _write_version(self.path, name, parent, bundle, edit)
        manifest = Manifest(current=name, versions=(*self._manifest.versions, record))
        try:
            self._write_manifest(manifest)
        except BaseException:
            self._discard_if_uncommitted(name)
            raise
        return name

    def revert(self, version: str) -> None:
        """Make an earlier committed version current again (history is kept)."""
        self.record(version)
        self._write_manifest(Manifest(current=version, versions=self._manifest.versions))

    def _write_manifest(self, manifest: Manifest) -> None:
        atomic_write_json(self.path / MANIFEST_FILE, manifest.model_dump(mode="json"))
        self._manifest = manifest

    def _discard_if_uncommitted(self, name: str) -> None:
        # The manifest on disk decides: the replace may have landed before a later step failed.
        try:
            on_disk = _read_manifest(self.path / MANIFEST_FILE)
        except SkillError:
            return  # leave everything for open() to judge
        if all(record.version != name for record in on_disk.versions):
            shutil.rmtree(self.path / name, ignore_errors=True)

    def _verify(self, record: VersionRecord) -> None:
        folder = self.path / record.version
        if not folder.is_dir():
            raise SkillError(
                f"{self.path}: version {record.version} is in the manifest but its folder is missing",
                version=record.version,
            )
        for rel, expected in record.files.items():
            file = folder / rel
            if not file.is_file() or sha256_file(file) != expected:
                raise SkillError(
                    f"{folder}: version {record.version} does not match the manifest ({rel} changed)",
                    version=record.version,
                    file=str(file),
                )
        try:
            bundle = Bundle.load(folder)
        except SkillError as exc:
            raise SkillError(
                f"version {record.version} is not a valid bundle: {exc}", version=record.version
            ) from exc
        if bundle.bundle_hash != record.bundle_hash:
            raise SkillError(
                f"{folder}: version {record.version} bundle hash does not match the manifest"
                " (files were added or removed)",
                version=record.version,
            )


def _write_version(
    root: Path, name: str, parent: str | None, bundle: Bundle, edit: EditRecord
) -> VersionRecord:
    """Write ``bundle`` completely under a temp name, then rename it to ``root/name``."""
    final = root / name
    if final.exists():
        raise SkillError(f"{final}: already exists; refusing to overwrite a version folder", version=name)
    tmp = root / f"{_TMP_PREFIX}{name}-{uuid.uuid4().hex[:8]}"
    files = bundle.files()
    try:
        bundle.save(tmp)  # every file fsynced by the atomic writer
        for folder in (tmp / "skills", tmp):
            fsync_dir(folder)
        os.rename(tmp, final)
        fsync_dir(root)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return VersionRecord(
        version=name,
        parent=parent,
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        bundle_hash=bundle.bundle_hash,
        relevant_hashes=bundle.relevant_hashes(),
        files={rel: sha256_bytes(data) for rel, data in sorted(files.items())},
        edit=edit,
    )


def _read_manifest(path: Path) -> Manifest:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SkillError(f"{path}: cannot read ({exc.strerror})", file=str(path)) from exc
    try:
        doc = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise SkillError(f"{path}: invalid manifest: not JSON ({exc})", file=str(path)) from exc
    upgraded = upgrade_manifest(doc)
    try:
        manifest = Manifest.model_validate_json(data if upgraded is doc else json.dumps(upgraded))
    except ValidationError as exc:
        raise SkillError(
            f"{path}: invalid manifest: {describe_validation(exc, limit=3)}", file=str(path)
        ) from exc
    _check_history(manifest, path)
    return manifest


def _check_history(manifest: Manifest, path: Path) -> None:
    seen: set[str] = set()
    for index, record in enumerate(manifest.versions):
        if record.version != _version_name(index):
            raise SkillError(f"{path}: version #{index} is named {record.version!r}", file=str(path))
        if (record.parent is None) != (index == 0) or (
            record.parent is not None and record.parent not in seen
        ):
            raise SkillError(
                f"{path}: version {record.version} has an invalid parent {record.parent!r}",
                file=str(path),
                version=record.version,
            )
        seen.add(record.version)
    if manifest.current not in seen:
        raise SkillError(
            f"{path}: current version {manifest.current!r} is not in the history", file=str(path)
        )


def _clean_leftovers(root: Path) -> list[str]:
    """Remove temp version folders and temp manifest files left by an interrupted write."""
    removed = []
    for entry in sorted(root.iterdir()):
        if entry.is_dir() and entry.name.startswith(_TMP_PREFIX):
            shutil.rmtree(entry)
            removed.append(entry.name)
        elif entry.is_file() and entry.name.startswith(f".{MANIFEST_FILE}.") and entry.name.endswith(".tmp"):
            entry.unlink()
            removed.append(entry.name)
    return removed


def _drop_uncommitted(root: Path, manifest: Manifest) -> list[str]:
    """Remove ``vNNNN`` folders renamed into place whose manifest write never happened."""
    committed = {record.version for record in manifest.versions}
    removed = []
    for entry in sorted(root.iterdir()):
        if entry.is_dir() and _VERSION.match(entry.name) and entry.name not in committed:
            shutil.rmtree(entry)
            removed.append(entry.name)
    if removed:
        fsync_dir(root)
    return removed
