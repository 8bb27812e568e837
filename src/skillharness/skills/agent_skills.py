"""The Agent Skills folder format: one ``<name>/SKILL.md`` per skill, YAML front matter + body.

The rules applied are those of the published specification (https://agentskills.io/specification,
checked against its source, ``docs/specification.mdx`` of github.com/agentskills/agentskills):

- ``name``: 1-64 characters, lowercase letters, digits and hyphens, no leading, trailing or
  doubled hyphen, equal to the name of the folder holding ``SKILL.md``;
- ``description``: 1-1024 characters, not blank;
- ``metadata``: a map of string keys to string values (where we record task type and hashes).

The specification also admits Unicode lowercase letters in a name; we derive names from task-type
slugs, which are ASCII, so only ASCII names are ever written, and the check here is that narrower
rule (every name it accepts, the specification accepts).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from skillharness.data.questions import slugify
from skillharness.errors import ExportError

__all__ = [
    "DESCRIPTION_MAX_CHARS",
    "NAME_MAX_CHARS",
    "SKILL_FILE",
    "ExportError",
    "SkillFile",
    "check_description",
    "name_problem",
    "parse_skill_file",
    "read_skills_folder",
    "skill_name",
]

SKILL_FILE = "SKILL.md"
NAME_MAX_CHARS = 64
DESCRIPTION_MAX_CHARS = 1024
_NAME = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_FENCE = "---"


def name_problem(name: str) -> str | None:
    """Why ``name`` is not a valid Agent Skills name, or None when it is."""
    if not name:
        return "it is empty"
    if len(name) > NAME_MAX_CHARS:
        return f"it is {len(name)} characters long, over the limit of {NAME_MAX_CHARS}"
    if not _NAME.match(name):
        return "only lowercase letters, digits and single inner hyphens are allowed"
    return None


def skill_name(task_type: str) -> str:
    """The Agent Skills ``name`` of a task type: its slug with hyphens (``OCR Problems`` → ``ocr-problems``).

    Raises:
        ExportError: naming the task type, when the slug is empty or longer than the limit. A long
            name is refused rather than cut, because two cut names could collide silently.
    """
    name = slugify(task_type).replace("_", "-")
    problem = name_problem(name)
    if problem is not None:
        raise ExportError(
            f"task type {task_type!r}: no valid Agent Skills name can be derived (from {name!r}: {problem})",
            task_type=task_type,
            name=name,
        )
    return name


def check_description(description: str, skill: str) -> str:
    """``description`` when the specification accepts it; ExportError naming ``skill`` otherwise."""
    if not description.strip() or len(description) > DESCRIPTION_MAX_CHARS:
        raise ExportError(
            f"skill {skill!r}: its description is {len(description)} characters; the Agent Skills "
            f"limit is 1-{DESCRIPTION_MAX_CHARS}",
            skill=skill,
        )
    return description


@dataclass(frozen=True)
class SkillFile:
    """One ``SKILL.md``: its front matter fields and its body, exactly as written."""

    name: str
    description: str
    body: str
    metadata: Mapping[str, str] = field(default_factory=dict)

    def render(self) -> str:
        """Front matter between ``---`` lines, then the body verbatim."""
        front: dict[str, object] = {"name": self.name, "description": self.description}
        if self.metadata:
            front["metadata"] = dict(self.metadata)
        # A wide line keeps each value on one line; the dumper quotes whatever YAML would misread.
        dumped = yaml.dump(front, Dumper=_FrontDumper, sort_keys=False, allow_unicode=True, width=1 << 16)
        return f"{_FENCE}\n{dumped}{_FENCE}\n{self.body}"


class _FrontDumper(yaml.SafeDumper):
    """Double-quotes (so escapes) any string with a character that is not printable: YAML reads
    NEL and the Unicode line separators as line breaks, so written raw they would not load back."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = None if value.isprintable() else '"'
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_FrontDumper.add_representer(str, _represent_str)


def parse_skill_file(text: str, source: str) -> SkillFile:
    """Split a ``SKILL.md`` into front matter and body and check it against the specification.

    Raises:
        ExportError: naming ``source``: no front matter, invalid YAML, a missing or invalid
            ``name`` or ``description``, metadata that is not string to string.
    """
    first, sep, rest = text.partition("\n")
    if first.rstrip("\r") != _FENCE or not sep:
        raise ExportError(f"{source}: does not start with a '---' front matter line", file=source)
    end = re.search(r"^---\r?$\n?", rest, re.MULTILINE)
    if end is None:
        raise ExportError(f"{source}: the front matter has no closing '---' line", file=source)
    try:
        front = yaml.safe_load(rest[: end.start()])
    except yaml.YAMLError as exc:
        raise ExportError(f"{source}: invalid YAML front matter ({exc})", file=source) from exc
    if not isinstance(front, dict):
        raise ExportError(f"{source}: the front matter is not a mapping", file=source)
    name, description, metadata = front.get("name"), front.get("description"), front.get("metadata", {})
    if not isinstance(name, str) or (problem := name_problem(name)) is not None:
        raise ExportError(f"{source}: invalid name {name!r} ({problem or 'not a string'})", file=source)
    if not isinstance(description, str):
        raise ExportError(f"{source}: the description is missing or not a string", file=source)
    check_description(description, name)
    if not isinstance(metadata, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()
    ):
        raise ExportError(f"{source}: metadata must map strings to strings", file=source)
    return SkillFile(name=name, description=description, body=rest[end.end() :], metadata=metadata)


def read_skills_folder(path: Path) -> dict[str, SkillFile]:
    """Every ``<name>/SKILL.md`` under ``path``, by name; each name must equal its folder's name."""
    if not path.is_dir():
        raise ExportError(f"{path}: not a folder", file=str(path))
    found: dict[str, SkillFile] = {}
    for folder in sorted(p for p in path.iterdir() if p.is_dir()):
        file = folder / SKILL_FILE
        if not file.is_file():
            continue
        try:
            # Bytes, not read_text: universal newlines would turn a skill's "\r\n" into "\n".
            text = file.read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ExportError(f"{file}: cannot read as UTF-8 ({exc})", file=str(file)) from exc
        skill = parse_skill_file(text, str(file))
        if skill.name != folder.name:
            raise ExportError(
                f"{file}: name {skill.name!r} differs from its folder's name {folder.name!r}",
                file=str(file),
            )
        found[skill.name] = skill
    return found
