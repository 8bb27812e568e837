"""Skills: region-aware skill documents, patch edits, content-hashed bundles, a crash-safe workspace."""

from skillharness.skills.agent_skills import ExportError, SkillFile, read_skills_folder, skill_name
from skillharness.skills.bundle import (
    SKILLS_DIR,
    SYSTEM_FILE,
    TOOLS_FILE,
    Bundle,
    EditTarget,
    initial_bundle,
    stray_skill_entries,
)
from skillharness.skills.document import MomentumUpdate, SkillDocument
from skillharness.skills.edits import (
    Edit,
    EditLimits,
    EditOp,
    EditSet,
    Refusal,
    RefusalReason,
    parse_edit_set,
)
from skillharness.skills.export import ExportFormat, export_bundle, load_export_source
from skillharness.skills.export_json import load_json_export
from skillharness.skills.hashing import canonical_bytes, content_hash
from skillharness.skills.lines import inserted_lines, normalised_line, with_line
from skillharness.skills.markers import APPENDIX_MARKER, MOMENTUM_MARKER
from skillharness.skills.patch import apply_edit_set, apply_edit_set_to_text
from skillharness.skills.workspace import (
    MANIFEST_FILE,
    EditRecord,
    Manifest,
    VersionReason,
    VersionRecord,
    Workspace,
)

__all__ = [
    "APPENDIX_MARKER",
    "MANIFEST_FILE",
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
    "canonical_bytes",
    "content_hash",
    "export_bundle",
    "initial_bundle",
    "inserted_lines",
    "load_export_source",
    "load_json_export",
    "normalised_line",
    "parse_edit_set",
    "read_skills_folder",
    "skill_name",
    "stray_skill_entries",
    "with_line",
]
