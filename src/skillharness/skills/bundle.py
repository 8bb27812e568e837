"""Bundles: the system prompt, one skill document per task type, and the tool descriptions.

On disk a bundle is a folder::

    system.md            the system prompt
    tools.yaml           {tool name: description} for every name in AGENT_TOOL_NAMES
    skills/<slug>.md     one skill document per task type (slug = data.questions.slugify)
"""

from __future__ import annotations

import re
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Literal

import jinja2
import yaml

from skillharness.data.questions import slugify
from skillharness.errors import SkillError
from skillharness.llm.roles import AGENT_TOOL_NAMES
from skillharness.skills.document import MomentumUpdate, SkillDocument
from skillharness.skills.edits import EditLimits, EditSet, Refusal, RefusalReason
from skillharness.skills.hashing import BUNDLE_HASH_SCHEME, RELEVANT_HASH_SCHEME, content_hash
from skillharness.skills.markers import MARKER_LIKE
from skillharness.skills.patch import apply_edit_set, apply_edit_set_to_text
from skillharness.util import strict_yaml
from skillharness.util.atomic import atomic_write_bytes
from skillharness.util.model import StrictModel

__all__ = ["SKILLS_DIR", "SYSTEM_FILE", "TOOLS_FILE", "Bundle", "EditTarget", "initial_bundle"]

SYSTEM_FILE = "system.md"
TOOLS_FILE = "tools.yaml"
SKILLS_DIR = "skills"
GENERIC_SKILL = "generic_skill.md.j2"  # the body of a skill for a task type with no packaged one
_SLUG = re.compile(r"^[a-z0-9]+(?:_[a-z0-9]+)*$")
_TOOLS_HEADER = "# Descriptions the agent sees for its tools. Parameters are fixed by the harness.\n"


class EditTarget(StrictModel):
    """What an edit set is aimed at: a task type's skill body, the system prompt, or one tool."""

    kind: Literal["skill", "system", "tools"]
    name: str | None = None

    @classmethod
    def skill(cls, task_type: str) -> EditTarget:
        return cls(kind="skill", name=slugify(task_type))

    @classmethod
    def system(cls) -> EditTarget:
        return cls(kind="system")

    @classmethod
    def tool(cls, tool_name: str) -> EditTarget:
        return cls(kind="tools", name=tool_name)

    def label(self) -> str:
        """``"skill:ocr_problems"``, ``"system"`` or ``"tools:get_frames"``."""
        return self.kind if self.name is None else f"{self.kind}:{self.name}"

    def reaches(self, task_type: str) -> bool:
        """Whether this target's text is read on questions of ``task_type``: a skill on its own
        class only, the system prompt and tool descriptions on every class. An edit's true effect
        is read on the questions it reaches (the report's and the demo's one number)."""
        return self.kind != "skill" or self.name == slugify(task_type)

    @classmethod
    def parse(cls, label: str) -> EditTarget:
        """The target a :meth:`label` names (ValidationError for an unknown kind)."""
        kind, _, name = label.partition(":")
        return cls.model_validate({"kind": kind, "name": name or None})


@dataclass(frozen=True)
class Bundle:
    """An immutable bundle. Skills are keyed by slug; methods accept a task type name or its slug."""

    system_prompt: str
    skills: Mapping[str, SkillDocument]
    tools: Mapping[str, str]
    source: str = field(default="<memory>", compare=False)

    def __post_init__(self) -> None:
        _validate(self.system_prompt, self.skills, self.tools, self.source)
        object.__setattr__(self, "skills", MappingProxyType(dict(sorted(self.skills.items()))))
        object.__setattr__(
            self, "tools", MappingProxyType({name: self.tools[name] for name in AGENT_TOOL_NAMES})
        )

    def __reduce__(self) -> tuple[object, tuple[object, ...]]:
        # Read-only mapping proxies do not pickle; rebuild (and revalidate) from plain dicts.
        return (Bundle, (self.system_prompt, dict(self.skills), dict(self.tools), self.source))

    # --- files --------------------------------------------------------------------------------
    @classmethod
    def load(cls, path: Path | str) -> Bundle:
        """Read and validate a bundle folder. Raises SkillError naming the file (and line)."""
        root = Path(path)
        if not root.is_dir():
            raise SkillError(f"{root}: not a bundle folder", file=str(root))
        system = _read_text(root / SYSTEM_FILE)
        tools = _parse_tools(_read_text(root / TOOLS_FILE), str(root / TOOLS_FILE))
        skills_dir = root / SKILLS_DIR
        if not skills_dir.is_dir():
            what = "is a file, not the skills folder" if skills_dir.exists() else "missing skills folder"
            raise SkillError(f"{skills_dir}: {what}", file=str(skills_dir))
        skills = {}
        for file in sorted(skills_dir.iterdir()):
            if file.suffix != ".md" or file.name.startswith("."):
                continue
            skills[file.stem] = SkillDocument.parse(_read_text(file), source=str(file))
        return cls(system_prompt=system, skills=skills, tools=tools, source=str(root))

    def files(self) -> dict[str, bytes]:
        """Relative path → exact bytes of every file :meth:`save` writes."""
        out = {SYSTEM_FILE: self.system_prompt.encode("utf-8"), TOOLS_FILE: _dump_tools(self.tools)}
        for slug, doc in self.skills.items():
            out[f"{SKILLS_DIR}/{slug}.md"] = doc.render().encode("utf-8")
        return out

    def save(self, path: Path | str, *, prune: bool = False) -> None:
        """Write the bundle's files into ``path`` (each atomically); other files are left alone,
        except with ``prune`` a skill file this bundle does not hold, which would silently join
        the bundle on its next load (replacing a bundle with one of other task types)."""
        root = Path(path)
        (root / SKILLS_DIR).mkdir(parents=True, exist_ok=True)
        for rel, data in self.files().items():
            atomic_write_bytes(root / rel, data)
        if prune:
            keep = {f"{slug}.md" for slug in self.skills}
            for stale in (root / SKILLS_DIR).glob("*.md"):
                if stale.name not in keep:
                    stale.unlink()

    # --- hashes -------------------------------------------------------------------------------
    @cached_property
    def bundle_hash(self) -> str:
        """Hash of everything the bundle holds (see :mod:`skillharness.skills.hashing`)."""
        return content_hash(
            {
                "scheme": BUNDLE_HASH_SCHEME,
                "system": self.system_prompt,
                "skills": {slug: doc.render() for slug, doc in self.skills.items()},
                "tools": dict(self.tools),
            }
        )

    def relevant_hash(self, task_type: str) -> str:
        """Hash of what an agent answering ``task_type`` sees: system prompt, that skill, tools."""
        slug = slugify(task_type)
        return content_hash(
            {
                "scheme": RELEVANT_HASH_SCHEME,
                "system": self.system_prompt,
                "skill": {"slug": slug, "text": self.skill(slug).render()},
                "tools": dict(self.tools),
            }
        )

    def relevant_hashes(self) -> dict[str, str]:
        """Slug → :meth:`relevant_hash` for every skill."""
        return {slug: self.relevant_hash(slug) for slug in self.skills}

    # --- reading and changing -----------------------------------------------------------------
    def skill(self, task_type: str) -> SkillDocument:
        """The skill document of a task type (name or slug)."""
        slug = slugify(task_type)
        try:
            return self.skills[slug]
        except KeyError:
            raise SkillError(f"{self.source}: no skill for task type {task_type!r} ({slug}.md)") from None

    def text_of(self, target: EditTarget) -> str:
        """The whole current text an edit set for ``target`` works on (a skill: all regions)."""
        if target.kind == "skill":
            return self.skill(target.name or "").render()
        if target.kind == "system":
            return self.system_prompt
        if target.name not in self.tools:
            raise SkillError(f"unknown tool {target.name!r}; known: {', '.join(self.tools)}")
        return self.tools[target.name]

    def missing_task_types(self, task_types: Iterable[str]) -> list[str]:
        """The task types among ``task_types`` without a skill document."""
        return [t for t in task_types if slugify(t) not in self.skills]

    def apply(
        self, target: EditTarget, edit_set: EditSet, limits: EditLimits | None = None
    ) -> Bundle | Refusal:
        """A new bundle with ``edit_set`` applied to ``target``'s body, or the refusal."""
        system, skills, tools = self.system_prompt, dict(self.skills), dict(self.tools)
        if target.kind == "skill":
            document = apply_edit_set(self.skill(target.name or ""), edit_set, limits)
            if isinstance(document, Refusal):
                return document
            skills[slugify(target.name or "")] = document
        elif target.kind == "system":
            text = apply_edit_set_to_text(system, edit_set, limits)
            if isinstance(text, Refusal):
                return text
            system = text
        else:
            if target.name not in tools:
                raise SkillError(f"unknown tool {target.name!r}; known: {', '.join(tools)}")
            text = apply_edit_set_to_text(tools[target.name], edit_set, limits)
            if isinstance(text, Refusal):
                return text
            tools[target.name] = text
        try:
            return self._rebuilt(system, skills, tools)
        except SkillError as exc:  # e.g. a rewrite emptied the system prompt or a tool description
            return Refusal(reason=RefusalReason.MALFORMED_EDIT, detail=str(exc)[:300])

    def with_momentum(self, task_type: str, update: MomentumUpdate) -> Bundle:
        """A new bundle whose ``task_type`` skill has ``update`` as its momentum region."""
        skills = dict(self.skills)
        skills[slugify(task_type)] = self.skill(task_type).with_momentum(update)
        return self._rebuilt(self.system_prompt, skills, dict(self.tools))

    def _rebuilt(self, system: str, skills: dict[str, SkillDocument], tools: dict[str, str]) -> Bundle:
        return Bundle(system, skills, tools, source=self.source)


def stray_skill_entries(path: Path | str) -> list[str]:
    """What ``skills/`` of a bundle folder holds that :meth:`Bundle.load` never reads: subfolders
    (a skill there is never shown to the agent) and files not named ``*.md``. Hidden entries
    (an editor's swap file, ``.DS_Store``) are left out."""
    skills_dir = Path(path) / SKILLS_DIR
    if not skills_dir.is_dir():
        return []
    return [
        f"{entry.name}/" if entry.is_dir() else entry.name
        for entry in sorted(skills_dir.iterdir())
        if not entry.name.startswith(".") and (entry.is_dir() or entry.suffix != ".md")
    ]


def initial_bundle(task_types: Iterable[str] | None = None) -> Bundle:
    """The packaged starting bundle: by default the 12 Video-MME task types' skills; with
    ``task_types`` (a benchmark's own vocabulary, from its questions), one skill per task type:
    the packaged one where its slug has one, else a generic skill whose body names the task type
    and gives only advice that holds for any multiple-choice question. Every skill keeps the
    packaged appendix (the answer format), which training never edits."""
    with resources.as_file(resources.files("skillharness.skills") / "defaults") as root:
        bundle = Bundle.load(root)
        generic = (root / GENERIC_SKILL).read_text(encoding="utf-8")
    skills: Mapping[str, SkillDocument] = bundle.skills
    if task_types is not None:
        appendix = next(iter(bundle.skills.values())).appendix
        skills = {}
        named: dict[str, str] = {}
        for task_type in sorted(set(task_types)):
            slug = slugify(task_type)
            if slug in named:  # one skill file per slug: two names for it would share a skill
                raise SkillError(
                    f"task types {named[slug]!r} and {task_type!r} share the skill file {slug}.md; "
                    "rename one in the questions file or its adapter",
                    slug=slug,
                )
            named[slug] = task_type
            known = bundle.skills.get(slug)
            skills[slug] = known or SkillDocument.author(
                _render_generic(generic, task_type), appendix, source=f"<generic skill {slug}>"
            )
        if not skills:
            raise SkillError("an initial bundle needs at least one task type")
    return Bundle(bundle.system_prompt, skills, bundle.tools, source="<initial bundle>")


def _render_generic(template: str, task_type: str) -> str:
    """The generic skill's body for ``task_type`` (a marker-like name is refused by ``parse``)."""
    env = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True, autoescape=False)
    return env.from_string(template).render(task_type=" ".join(task_type.split()))


def _validate(
    system: str, skills: Mapping[str, SkillDocument], tools: Mapping[str, str], source: str
) -> None:
    if not system.strip():
        raise SkillError(
            f"{source}/{SYSTEM_FILE}: the system prompt is empty", file=f"{source}/{SYSTEM_FILE}"
        )
    for name, text in tools.items():
        if not isinstance(text, str) or not text.strip():
            raise SkillError(f"{source}/{TOOLS_FILE}: tool {name!r} needs a non-empty description string")
    for name, text in (("system prompt", system), *((f"tool {k}", v) for k, v in tools.items())):
        if MARKER_LIKE.search(text):
            raise SkillError(f"{source}: the {name} contains a skillharness marker-like sequence")
    for slug in skills:
        if not _SLUG.match(slug):
            raise SkillError(f"{source}/{SKILLS_DIR}/{slug}.md: file name is not a task-type slug")
    unknown = sorted(set(tools) - set(AGENT_TOOL_NAMES))
    missing = [name for name in AGENT_TOOL_NAMES if name not in tools]
    if unknown or missing:
        raise SkillError(
            f"{source}/{TOOLS_FILE}: tools must be exactly {', '.join(AGENT_TOOL_NAMES)}"
            f" (unknown: {unknown or 'none'}; missing: {missing or 'none'})",
            file=f"{source}/{TOOLS_FILE}",
        )


def _read_text(path: Path) -> str:
    try:
        mode = path.stat().st_mode
        if not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
            # A FIFO (or device) would block the read forever, or never end.
            raise SkillError(f"{path}: not a regular file (a pipe or a device)", file=str(path))
        data = path.read_bytes()
    except FileNotFoundError:
        raise SkillError(f"{path}: missing", file=str(path)) from None
    except OSError as exc:
        raise SkillError(f"{path}: cannot read ({exc.strerror})", file=str(path)) from exc
    try:
        # utf-8-sig: an editor's byte-order mark is not text the agent should be sent (nor hash);
        # every other file a user writes (questions, subtitles, templates) is read the same way.
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise SkillError(f"{path}:{line}: not valid UTF-8", file=str(path), line=line) from exc


def _parse_tools(text: str, source: str) -> dict[str, str]:
    try:
        loaded = strict_yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        # One line: PyYAML's own text repeats the source with carets over several lines.
        why = " ".join(str(getattr(exc, "problem", None) or exc).split())
        raise SkillError(f"{source}:{line or '?'}: invalid YAML: {why}", file=source, line=line) from exc
    if not isinstance(loaded, dict) or not all(isinstance(k, str) for k in loaded):
        raise SkillError(f"{source}: expected a mapping of tool name to description", file=source)
    for name, text in loaded.items():
        if isinstance(text, str) and not _is_utf8(text):
            # A "\ud800" escape loads as a lone surrogate, which no file or hash can hold.
            raise SkillError(
                f"{source}: tool {name!r}: the description is not valid Unicode text", file=source
            )
    return loaded


def _is_utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class _ToolsDumper(yaml.SafeDumper):
    """Writes multi-line descriptions as ``|`` block scalars, so diffs show them line by line."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    # Only plain printable text goes in a block; anything else (NEL, control characters) is left
    # to double quotes, which escape it, so every string loads back exactly.
    plain = all(char == "\n" or char.isprintable() for char in value)
    if not plain:
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style='"')
    style = "|" if "\n" in value and value == value.strip(" ") else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_ToolsDumper.add_representer(str, _represent_str)


def _dump_tools(tools: Mapping[str, str]) -> bytes:
    body = yaml.dump(
        dict(tools),
        Dumper=_ToolsDumper,
        sort_keys=False,
        allow_unicode=True,
        width=100,
        default_flow_style=False,
    )
    return (_TOOLS_HEADER + body).encode("utf-8")
