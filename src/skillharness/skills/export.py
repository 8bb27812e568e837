"""Take a bundle out of the harness: one prompt text, an Agent Skills folder, or JSON with hashes.

Every format carries each skill exactly as the agent sees it: :meth:`SkillDocument.render`, the
body, the momentum region and the appendix with the two marker lines between them, because the
agent's system message holds that rendered text (``agent.prompt.system_message``). Every output
is a pure function of the bundle (no time stamps, sorted keys), so exporting twice gives the same
bytes, and is written atomically: a crash leaves the old output or the new one, never a mix.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Iterable, Mapping
from enum import StrEnum
from pathlib import Path

from skillharness import __version__
from skillharness.data.questions import slugify
from skillharness.skills.agent_skills import SKILL_FILE, ExportError, SkillFile, check_description, skill_name
from skillharness.skills.bundle import SKILLS_DIR, SYSTEM_FILE, TOOLS_FILE, Bundle
from skillharness.skills.document import ensure_trailing_newline
from skillharness.skills.export_json import BundleExport, text_sha256
from skillharness.skills.workspace import MANIFEST_FILE, Workspace
from skillharness.util.atomic import atomic_write_bytes, fsync_dir, new_mode

__all__ = [
    "README_FILE",
    "SYSTEM_SKILL",
    "ExportFormat",
    "export_bundle",
    "load_export_source",
    "prompt_text",
    "skills_files",
    "task_type_names",
]

# The system prompt's skill: an Agent Skills client loads skills by their description, so the
# system prompt must be one too, or nothing would ever put it in front of the model.
SYSTEM_SKILL = "video-qa-system"
README_FILE = "README.md"
_HEADING = re.compile(r"\A#[ \t]+(.+?)[ \t]*\r?$", re.MULTILINE)
_META = "skillharness-"


class ExportFormat(StrEnum):
    """What ``bundle export`` writes."""

    PROMPT = "prompt"  # one text file
    SKILLS = "skills"  # an Agent Skills folder
    JSON = "json"  # one JSON file, loadable back


def load_export_source(path: Path) -> tuple[Bundle, str]:
    """The bundle a folder holds, and a label saying which: a bundle folder, a workspace's version
    folder (``ws/v0003``) or a workspace (its current version).

    A workspace is opened with :meth:`Workspace.read` (never cleaning up what may be a
    training run's commit in flight). The current version is checked against the hash its
    manifest records.

    Raises:
        ExportError: ``path`` is neither a bundle folder nor a workspace.
        SkillError: the bundle (or the manifest) is malformed, naming the file.
    """
    if (path / MANIFEST_FILE).is_file():
        workspace = Workspace.read(path, verify=False)
        record = workspace.record(workspace.current_version)
        bundle = workspace.current()
        if bundle.bundle_hash != record.bundle_hash:
            raise ExportError(
                f"{path / record.version}: hashes to bundle {bundle.bundle_hash[:12]}, the manifest "
                f"records {record.bundle_hash[:12]}",
                file=str(path / record.version),
            )
        return bundle, f"{path} ({record.version})"
    if not path.is_dir() or not any((path / n).exists() for n in (SYSTEM_FILE, TOOLS_FILE, SKILLS_DIR)):
        raise ExportError(
            f"{path}: not a bundle folder (no {SYSTEM_FILE}, {TOOLS_FILE} or {SKILLS_DIR}/) nor a "
            f"workspace (no {MANIFEST_FILE})",
            file=str(path),
        )
    return Bundle.load(path), str(path)


def task_type_names(bundle: Bundle, known: Iterable[str] = ()) -> dict[str, str]:
    """Slug → the task type's name: from ``known`` names, else the skill's first ``# heading`` when
    it slugs to the same slug, else the slug itself (a bundle stores only slugs)."""
    by_slug = {slugify(name): name for name in known}
    names = {}
    for slug, doc in bundle.skills.items():
        heading = _HEADING.search(doc.body)
        from_heading = heading.group(1) if heading and slugify(heading.group(1)) == slug else None
        names[slug] = by_slug.get(slug) or from_heading or slug
    return names


def _tools_section(bundle: Bundle, level: str) -> str:
    lines = [f"{level} Tools", "", "The agent's tools (their parameters are fixed by the harness):", ""]
    for name, description in bundle.tools.items():
        lines += [f"{level}# {name}", "", description.strip(), ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def _verbatim(text: str) -> str:
    # Texts are joined, never trimmed, so each stays a verbatim substring of the output.
    return ensure_trailing_newline(text) + "\n"


def prompt_text(bundle: Bundle, names: Mapping[str, str]) -> str:
    """One text: the system prompt, each skill under its task type with a routing sentence, the tools.

    The system prompt and every rendered skill appear verbatim. In the harness the agent sees only
    its question's skill; here the other harness's model sees all of them, so each is introduced
    by the sentence that says when it applies.
    """
    parts = [
        _verbatim(bundle.system_prompt),
        "# Skills by task type\n\n",
        "Each question has one task type. Follow only the skill written for it; when the question does "
        "not name its task type, use the skill whose task type fits it best.\n\n",
    ]
    for slug, doc in bundle.skills.items():
        name = names.get(slug, slug)
        parts += [
            f"## Task type: {name}\n\nFor questions of task type {name}, follow:\n\n",
            _verbatim(doc.render()),
        ]
    parts.append(_tools_section(bundle, "#"))
    return "".join(parts)


def _skill_file(bundle: Bundle, slug: str, task_type: str) -> SkillFile:
    name = skill_name(task_type)  # task_type_names keeps slugify(task_type) == slug
    text = bundle.skills[slug].render()
    description = check_description(
        f"Guidance for answering a multiple-choice question about a video whose task type is "
        f"{task_type}. Use it for every video QA question of task type {task_type}.",
        name,
    )
    metadata = {
        f"{_META}task-type": task_type,
        f"{_META}slug": slug,
        f"{_META}sha256": text_sha256(text),
        f"{_META}bundle-hash": bundle.bundle_hash,
    }
    return SkillFile(name=name, description=description, body=text, metadata=metadata)


def _system_file(bundle: Bundle, routes: Mapping[str, str]) -> SkillFile:
    routing = [f"For questions of task type {task}, follow the skill `{to}`." for task, to in routes.items()]
    body = "".join(
        [
            _verbatim(bundle.system_prompt),
            "## Skills by task type\n\n",
            *(f"{line}\n" for line in routing),
            "\n",
        ]
    )
    body += _tools_section(bundle, "##")
    description = (
        "Instructions for answering multiple-choice questions about a video, and which skill to "
        "follow for each task type. Use it first for every video QA question."
    )
    metadata = {
        f"{_META}system-sha256": text_sha256(bundle.system_prompt),
        f"{_META}bundle-hash": bundle.bundle_hash,
    }
    return SkillFile(name=SYSTEM_SKILL, description=description, body=body, metadata=metadata)


def skills_files(bundle: Bundle, names: Mapping[str, str]) -> dict[str, bytes]:
    """Relative path → bytes of an Agent Skills folder: one skill per task type, the system skill,
    and a README for the person who opens the folder.

    Raises:
        ExportError: naming the skill whose name or description cannot be made valid, or a task
            type whose name would take the system skill's name.
    """
    skills = {slug: _skill_file(bundle, slug, names.get(slug, slug)) for slug in bundle.skills}
    for slug, skill in skills.items():
        if skill.name == SYSTEM_SKILL:
            raise ExportError(
                f"{bundle.source}: the skill {slug!r} would take the name {SYSTEM_SKILL!r}, which holds "
                "the system prompt",
                skill=slug,
            )
    routes = {names.get(slug, slug): skill.name for slug, skill in skills.items()}
    files = {f"{s.name}/{SKILL_FILE}": s.render().encode("utf-8") for s in skills.values()}
    files[f"{SYSTEM_SKILL}/{SKILL_FILE}"] = _system_file(bundle, routes).render().encode("utf-8")
    files[README_FILE] = _readme(bundle, routes).encode("utf-8")
    return dict(sorted(files.items()))


def _readme(bundle: Bundle, routes: Mapping[str, str]) -> str:
    lines = [
        "# Video QA skills",
        "",
        f"Exported by skillharness {__version__} from bundle `{bundle.bundle_hash}`.",
        "",
        f"`{SYSTEM_SKILL}` holds the system prompt, the routing by task type and the tool descriptions;",
        "each other folder is the skill of one task type, as the agent saw it.",
        "",
        "| skill | task type |",
        "|---|---|",
        f"| `{SYSTEM_SKILL}` | every question |",
        *(f"| `{name}` | {task.replace('|', '/')} |" for task, name in routes.items()),
    ]
    return "\n".join(lines) + "\n"


def export_bundle(
    bundle: Bundle, fmt: ExportFormat, out: Path, *, force: bool = False, known: Iterable[str] = ()
) -> list[str]:
    """Write ``bundle`` in ``fmt`` to ``out``; return the relative paths written ("" for one file).

    Raises:
        ExportError: ``out`` exists and ``force`` is not given, or it is not something the export
            may replace; or the bundle cannot be expressed in ``fmt``.
    """
    names = task_type_names(bundle, known)
    # Everything is built before anything is written: a bad name leaves ``out`` untouched.
    if fmt is ExportFormat.SKILLS:
        files = skills_files(bundle, names)
    elif fmt is ExportFormat.PROMPT:
        files = {"": prompt_text(bundle, names).encode("utf-8")}
    else:
        files = {"": BundleExport.of(bundle, names).model_dump_json(indent=2).encode("utf-8") + b"\n"}
    _check_not_source(out, bundle)
    _check_out(out, force, folder=fmt is ExportFormat.SKILLS)
    try:
        if fmt is ExportFormat.SKILLS:
            _write_folder(out, files)
        else:
            atomic_write_bytes(out, files[""])
    except OSError as exc:  # no permission, a file where a parent folder should be, a full disk
        raise ExportError(f"--out {out}: cannot write ({exc.strerror or exc})", file=str(out)) from exc
    return list(files)


def _source_folders(bundle: Bundle) -> list[Path]:
    """The folder ``bundle`` was read from, and the workspace holding it when it is a version."""
    folder = Path(bundle.source)
    if not folder.is_dir():  # built in memory, or read from a JSON export
        return []
    folders = [folder.resolve()]
    if (folder.parent / MANIFEST_FILE).is_file():
        folders.append(folder.parent.resolve())
    return folders


def _check_not_source(out: Path, bundle: Bundle) -> None:
    """Refuse an ``out`` in, or holding, the bundle's own folder (or its workspace): even with
    --force, the export would replace ``system.md`` or ``manifest.json`` with itself, or add a skill
    file that joins the bundle on its next load."""
    target = out.resolve()
    for folder in _source_folders(bundle):
        where = "is" if target == folder else "lies in" if folder in target.parents else "holds"
        if target == folder or folder in target.parents or target in folder.parents:
            raise ExportError(
                f"--out {out}: {where} {folder}, the folder the bundle is read from; "
                "write the export outside its source",
                file=str(out),
            )
    existing = next(p for p in (out, *out.parents) if p.exists())
    if existing != out and not existing.is_dir():
        # mkdir's own message would be "File exists", naming neither the file nor the problem.
        raise ExportError(f"--out {out}: {existing} is a file, not a folder", file=str(out))


def _check_out(out: Path, force: bool, *, folder: bool) -> None:
    if not out.exists() and not out.is_symlink():
        return
    if not force:
        raise ExportError(f"--out {out}: already exists; pass --force to replace it", file=str(out))
    if folder != out.is_dir():
        kind = "a folder" if out.is_dir() else "a file"
        raise ExportError(f"--out {out}: is {kind}; this format writes {'a folder' if folder else 'a file'}")
    if folder and (stray := _not_exported(out)):
        # --force replaces a previous export, never a folder that holds anything else.
        raise ExportError(
            f"--out {out}: holds {stray.name!r}, which no skills export writes; refusing to replace it",
            file=str(out),
        )


def _not_exported(folder: Path) -> Path | None:
    for entry in sorted(folder.iterdir()):
        if entry.name == README_FILE and entry.is_file():
            continue
        if not entry.is_dir() or not (entry / SKILL_FILE).is_file():
            return entry
    return None


def _write_folder(out: Path, files: Mapping[str, bytes]) -> None:
    """Write every file under a temp folder beside ``out``, then swap it into place."""
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=out.parent))
    old: Path | None = None
    try:
        tmp.chmod(new_mode(folder=True))  # mkdtemp's 0700 would shut out every other reader
        for rel, data in files.items():
            atomic_write_bytes(tmp / rel, data)
        for sub in sorted({(tmp / rel).parent for rel in files}):
            fsync_dir(sub)
        if out.exists():
            # rename(2) may replace an empty folder: the previous export moves aside in one step.
            old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
            os.replace(out, old)
        try:
            os.replace(tmp, out)
        except OSError:
            if old is not None:
                os.replace(old, out)  # put the previous export back before the error surfaces
                old = None
            raise
        fsync_dir(out.parent)
    finally:
        for leftover in (tmp, old):
            if leftover is not None:
                shutil.rmtree(leftover, ignore_errors=True)
