"""The JSON export of a bundle: every text with its sha256, the bundle hash, the version; loadable back.

Each ``sha256`` is of the text's UTF-8 bytes, which for the system prompt and a skill is also the
sha256 of its file in a bundle folder (and in a workspace manifest). ``bundle_hash`` is the hash
the harness records for runs (:attr:`Bundle.bundle_hash`); loading recomputes every hash, so an
export edited by hand, or read by a version that hashes bundles differently, is refused.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from pydantic import ValidationError

from skillharness import __version__
from skillharness.data.questions import slugify
from skillharness.llm.roles import AGENT_TOOL_NAMES
from skillharness.skills.agent_skills import ExportError
from skillharness.skills.bundle import Bundle
from skillharness.skills.document import SkillDocument
from skillharness.skills.hashing import BUNDLE_HASH_SCHEME
from skillharness.util.model import StrictModel, describe_validation

__all__ = [
    "EXPORT_SCHEME",
    "BundleExport",
    "ExportedSkill",
    "ExportedText",
    "load_json_export",
    "text_sha256",
]

EXPORT_SCHEME = "skillharness.bundle-export/1"


def text_sha256(text: str) -> str:
    """Hex sha256 of ``text``'s UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class ExportedText(StrictModel):
    """One text of the bundle and the sha256 of its UTF-8 bytes."""

    text: str
    sha256: str

    @classmethod
    def of(cls, text: str) -> ExportedText:
        return cls(text=text, sha256=text_sha256(text))

    def checked(self, where: str, source: str) -> str:
        """The text, once its sha256 matches; ExportError naming ``where`` otherwise."""
        actual = text_sha256(self.text)
        if actual != self.sha256:
            raise ExportError(
                f"{source}: {where}: sha256 {actual[:12]} of the text differs from the recorded "
                f"{self.sha256[:12]} (edited by hand?)",
                file=source,
                entry=where,
            )
        return self.text


class ExportedSkill(ExportedText):
    """A skill document as the agent sees it (all regions rendered), with its task type's name."""

    task_type: str
    relevant_hash: str


class BundleExport(StrictModel):
    """The whole JSON document (``format`` names this layout; the hash scheme names the hash rule)."""

    format: Literal["skillharness.bundle-export/1"]
    skillharness_version: str
    bundle_hash_scheme: str
    bundle_hash: str
    system: ExportedText
    skills: dict[str, ExportedSkill]
    tools: dict[str, ExportedText]

    @classmethod
    def of(cls, bundle: Bundle, names: Mapping[str, str]) -> BundleExport:
        """The export of ``bundle``; ``names`` maps each skill's slug to its task type's name."""
        skills = {
            slug: ExportedSkill(
                task_type=names.get(slug, slug),
                text=doc.render(),
                sha256=text_sha256(doc.render()),
                relevant_hash=bundle.relevant_hash(slug),
            )
            for slug, doc in bundle.skills.items()
        }
        return cls(
            format=EXPORT_SCHEME,
            skillharness_version=__version__,
            bundle_hash_scheme=BUNDLE_HASH_SCHEME,
            bundle_hash=bundle.bundle_hash,
            system=ExportedText.of(bundle.system_prompt),
            skills=skills,
            tools={name: ExportedText.of(text) for name, text in bundle.tools.items()},
        )

    def to_bundle(self, source: str) -> Bundle:
        """The bundle, after every text's sha256 and the bundle hash are checked."""
        if self.bundle_hash_scheme != BUNDLE_HASH_SCHEME:
            raise ExportError(
                f"{source}: bundle hash scheme {self.bundle_hash_scheme!r} (written by skillharness "
                f"{self.skillharness_version}); this version reads {BUNDLE_HASH_SCHEME!r}",
                file=source,
            )
        self._check_names(source)
        skills = {
            slug: SkillDocument.parse(skill.checked(f"skills.{slug}", source), source=f"{source}#{slug}")
            for slug, skill in self.skills.items()
        }
        bundle = Bundle(
            system_prompt=self.system.checked("system", source),
            skills=skills,
            tools={name: text.checked(f"tools.{name}", source) for name, text in self.tools.items()},
            source=source,
        )
        if bundle.bundle_hash != self.bundle_hash:
            raise ExportError(
                f"{source}: the texts hash to bundle {bundle.bundle_hash[:12]}, the export records "
                f"{self.bundle_hash[:12]}",
                file=source,
            )
        for slug, skill in self.skills.items():  # recorded for runs to be matched by: never a stale one
            if bundle.relevant_hash(slug) != skill.relevant_hash:
                raise ExportError(
                    f"{source}: skills.{slug}: relevant_hash {skill.relevant_hash[:12]} is not the "
                    f"hash of the texts, {bundle.relevant_hash(slug)[:12]} (edited by hand?)",
                    file=source,
                    entry=f"skills.{slug}",
                )
        return bundle

    def _check_names(self, source: str) -> None:
        """The keys name entries a bundle can hold (no sha256 covers a key): else the bundle's own
        check would name a file (``bundle.json/skills/X.md``) that exists nowhere."""
        for slug in self.skills:
            if not slug or slugify(slug) != slug:
                like = slugify(slug) or "ocr_problems"
                raise ExportError(
                    f"{source}: skills.{slug}: not a task-type slug (such as {like})",
                    file=source,
                    entry=f"skills.{slug}",
                )
        if set(self.tools) != set(AGENT_TOOL_NAMES):
            unknown = sorted(set(self.tools) - set(AGENT_TOOL_NAMES))
            missing = [name for name in AGENT_TOOL_NAMES if name not in self.tools]
            raise ExportError(
                f"{source}: tools: must be exactly {', '.join(AGENT_TOOL_NAMES)} "
                f"(unknown: {unknown or 'none'}; missing: {missing or 'none'})",
                file=source,
                entry="tools",
            )


def load_json_export(path: Path) -> Bundle:
    """Read a JSON export back into the bundle it was written from (every hash checked).

    Raises:
        ExportError: naming the file, and the entry at fault when one is.
        SkillError: a skill text that does not parse as a skill document.
    """
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ExportError(f"{path}: cannot read ({exc.strerror})", file=str(path)) from exc
    try:
        export = BundleExport.model_validate_json(data)
    except ValidationError as exc:
        raise ExportError(
            f"{path}: not a skillharness bundle export ({describe_validation(exc, limit=3)})", file=str(path)
        ) from exc
    return export.to_bundle(str(path))
