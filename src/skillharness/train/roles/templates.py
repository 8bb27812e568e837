"""Prompt templates of the training loop: loaded all at once, rendered strictly, never empty.

Each template is one file ``<name>.md`` in the prompt folder (the package's ``prompts/`` unless
another folder is given) holding exactly two Jinja blocks, ``{% block system %}`` and
``{% block user %}``; files whose names start with ``_`` are partials (macros) a template imports.
Loading checks every template named in :data:`TEMPLATE_SPECS` up front (audit P0-1, P0-6, P2-7:
the predecessor read a missing file as "" and so evolved nothing): a missing, empty or unparsable
file, a missing block, text outside the blocks (it would never be sent) or a variable the training
loop does not provide is a :class:`~skillharness.errors.TemplateError`. Rendering is strict: the
variables must be exactly the declared ones, an undefined name inside raises, an empty part raises.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

import jinja2
from jinja2 import meta, nodes

from skillharness.errors import TemplateError
from skillharness.llm.roles import (
    AGENT_TOOL_NAMES,
    DOCUMENT_CLOSE,
    DOCUMENT_OPEN,
    RANK_CANDIDATE_HEADING,
    RANK_DECLINE_OFFER,
    RANK_NONE,
    TOOL_GET_FRAMES,
    TOOL_GET_SUBTITLES,
    TOOL_SUBMIT_ANSWER,
    UNDER_TEST_CLOSE,
    UNDER_TEST_OPEN,
    Role,
    response_format,
)
from skillharness.skills.markers import APPENDIX_MARKER, MOMENTUM_MARKER
from skillharness.train.roles.prompt_specs import TEMPLATE_SPECS, TemplateSpec
from skillharness.util.canonical import content_hash

__all__ = [
    "BLOCKS",
    "PromptTemplates",
    "RenderedPrompt",
    "check_templates",
    "load_templates",
    "packaged_prompts",
]

BLOCKS = ("system", "user")
_SUFFIX = ".md"


def candidate_heading(index: int) -> str:
    """The line introducing rank candidate ``index`` (0-based), as the rank role expects it."""
    return RANK_CANDIDATE_HEADING.format(index=index)


# Names every template may use without being passed them: the wire conventions, one home each.
_GLOBALS: dict[str, Any] = {
    "DOCUMENT_OPEN": DOCUMENT_OPEN,
    "DOCUMENT_CLOSE": DOCUMENT_CLOSE,
    "UNDER_TEST_OPEN": UNDER_TEST_OPEN,
    "UNDER_TEST_CLOSE": UNDER_TEST_CLOSE,
    "MOMENTUM_MARKER": MOMENTUM_MARKER,
    "APPENDIX_MARKER": APPENDIX_MARKER,
    "TOOL_GET_FRAMES": TOOL_GET_FRAMES,
    "TOOL_GET_SUBTITLES": TOOL_GET_SUBTITLES,
    "TOOL_SUBMIT_ANSWER": TOOL_SUBMIT_ANSWER,
    "AGENT_TOOL_NAMES": AGENT_TOOL_NAMES,
    "candidate_heading": candidate_heading,
    "RANK_DECLINE_OFFER": RANK_DECLINE_OFFER,
    "RANK_NONE": RANK_NONE,
}


@dataclass(frozen=True)
class RenderedPrompt:
    """A rendered template: the two messages to send and the role (hence schema) answering them."""

    name: str
    role: Role
    system: str
    user: str

    def messages(self) -> tuple[dict[str, Any], ...]:
        """Chat-completions messages: one system, one user."""
        return ({"role": "system", "content": self.system}, {"role": "user", "content": self.user})

    def response_format(self) -> dict[str, Any]:
        """The ``response_format`` asking for this role's strict JSON schema."""
        return response_format(self.role)


@dataclass(frozen=True)
class _Loaded:
    template: jinja2.Template
    sha256: str  # of the template's source and the partials it imports
    uses: frozenset[str]  # the variables its text reads


def packaged_prompts() -> Traversable:
    """The prompt folder shipped inside the package."""
    return resources.files("skillharness.train") / "prompts"


class PromptTemplates:
    """Every template of the training loop, loaded and checked. Build with :func:`load_templates`."""

    def __init__(self, folder: str, loaded: Mapping[str, _Loaded]) -> None:
        self.folder = folder
        self._loaded = dict(loaded)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(sorted(self._loaded))

    def spec(self, name: str) -> TemplateSpec:
        """The contract of template ``name``."""
        self._template(name)
        return TEMPLATE_SPECS[name]

    def template_hash(self, name: str) -> str:
        """sha256 of the template's source and the partials it imports (for diagnosis fingerprints)."""
        self._template(name)
        return self._loaded[name].sha256

    def required_variables(self, name: str) -> frozenset[str]:
        """The variables :meth:`render` demands for ``name``: exactly those its spec declares."""
        self._template(name)
        return frozenset(TEMPLATE_SPECS[name].variables)

    def used_variables(self, name: str) -> frozenset[str]:
        """The variables the template's text reads (found by ``jinja2.meta``; within the declared)."""
        self._template(name)
        return self._loaded[name].uses

    def render(self, name: str, variables: Mapping[str, Any] | None = None, /, **more: Any) -> RenderedPrompt:
        """Render ``name`` with exactly its declared variables.

        Raises:
            TemplateError: a variable is missing, unknown or None, a name inside the template is
                undefined, or a part renders empty. Never returns an empty prompt.
        """
        template, spec = self._template(name), TEMPLATE_SPECS[name]
        values = {**(variables or {}), **more}
        where = f"template {name!r} ({self._file(name)})"
        missing = sorted(spec.variables.keys() - values.keys())
        if missing:
            raise TemplateError(
                f"{where}: missing variable(s) {', '.join(missing)}", template=name, variable=missing[0]
            )
        unknown = sorted(values.keys() - spec.variables.keys())
        if unknown:
            raise TemplateError(
                f"{where}: unknown variable(s) {', '.join(unknown)}; "
                f"it takes {', '.join(sorted(spec.variables))}",
                template=name,
                variable=unknown[0],
            )
        nones = sorted(key for key, value in values.items() if value is None)
        if nones:
            raise TemplateError(
                f"{where}: variable(s) {', '.join(nones)} are None", template=name, variable=nones[0]
            )
        parts = {block: self._render_block(name, template, block, values) for block in BLOCKS}
        return RenderedPrompt(name=name, role=spec.role, system=parts["system"], user=parts["user"])

    def render_samples(self) -> dict[str, RenderedPrompt]:
        """Every template rendered with its spec's sample values (the preflight's proof)."""
        return {name: self.render(name, TEMPLATE_SPECS[name].sample()) for name in self.names}

    def _render_block(self, name: str, template: jinja2.Template, block: str, values: dict[str, Any]) -> str:
        where = f"template {name!r} ({self._file(name)}), block {block!r}"
        try:
            text = "".join(template.blocks[block](template.new_context(values))).strip()
        except jinja2.UndefinedError as exc:
            raise TemplateError(f"{where}: undefined: {exc.message}", template=name, block=block) from exc
        except jinja2.TemplateError as exc:  # a broken partial import, a failing filter, ...
            raise TemplateError(f"{where}: {exc}", template=name, block=block) from exc
        except Exception as exc:  # the template's own expression failed ({{ 1/0 }}, {{ text + 1 }})
            raise TemplateError(
                f"{where}: an expression raised {type(exc).__name__}: {exc}", template=name, block=block
            ) from exc
        if not text:
            raise TemplateError(f"{where}: rendered empty", template=name, block=block)
        return text

    def _template(self, name: str) -> jinja2.Template:
        try:
            return self._loaded[name].template
        except KeyError:
            raise TemplateError(
                f"no prompt template {name!r}; known: {', '.join(self.names)}", template=name
            ) from None

    def _file(self, name: str) -> str:
        return f"{self.folder}/{name}{_SUFFIX}"


def load_templates(folder: Path | str | Traversable | None = None) -> PromptTemplates:
    """Load and check every template (``folder`` defaults to the packaged prompts).

    Raises:
        TemplateError: listing every problem found (missing, empty or unparsable file, missing
            block, text outside blocks, undeclared variables, a sample that does not render).
    """
    templates, problems = _load_all(folder)
    if problems:
        raise TemplateError("; ".join(problems), problems=problems)
    return templates


def check_templates(folder: Path | str | Traversable | None = None) -> list[str]:
    """One message per problem with the templates in ``folder`` (empty: all load and render)."""
    return _load_all(folder)[1]


# --- loading ---------------------------------------------------------------------------------
def _environment(sources: Mapping[str, str]) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.DictLoader(dict(sources)),
        undefined=jinja2.StrictUndefined,
        autoescape=False,  # prompts are plain text, not HTML
        keep_trailing_newline=True,
        trim_blocks=True,  # block tags on their own line leave no blank line behind
        lstrip_blocks=True,
    )
    env.globals.update(_GLOBALS)
    return env


def _read_sources(root: Traversable) -> tuple[dict[str, str], dict[str, str]]:
    """File name → text of every readable ``.md`` file in ``root``; file name → why not, for the rest."""
    sources: dict[str, str] = {}
    unreadable: dict[str, str] = {}
    for entry in sorted(root.iterdir(), key=lambda e: e.name):
        if not entry.name.endswith(_SUFFIX) or not entry.is_file():
            continue
        try:
            # utf-8-sig: an editor's byte-order mark would otherwise be text outside the blocks.
            sources[entry.name] = entry.read_bytes().decode("utf-8-sig")
        except (OSError, UnicodeDecodeError) as exc:
            unreadable[entry.name] = f"prompt file {root}/{entry.name} cannot be read as UTF-8: {exc}"
    return sources, unreadable


def _load_all(folder: Path | str | Traversable | None) -> tuple[PromptTemplates, list[str]]:
    root: Traversable = (
        packaged_prompts() if folder is None else (Path(folder) if isinstance(folder, str | Path) else folder)
    )
    if not root.is_dir():  # one message, not one per template
        what = "is a file, not a folder" if isinstance(root, Path) and root.exists() else "does not exist"
        return PromptTemplates(str(root), {}), [f"prompt folder {root} {what}"]
    sources, unreadable = _read_sources(root)
    problems = list(unreadable.values())
    env = _environment(sources)
    templates: dict[str, _Loaded] = {}
    for name, spec in TEMPLATE_SPECS.items():
        if f"{name}{_SUFFIX}" in unreadable:
            continue  # already reported; not "missing" as well
        found = _check_source(env, sources, f"{root}/{name}{_SUFFIX}", spec)
        if isinstance(found, list):
            problems.extend(found)
        else:
            templates[name] = found
    loaded = PromptTemplates(str(root), templates)
    for name in templates:
        try:
            loaded.render(name, TEMPLATE_SPECS[name].sample())
        except TemplateError as exc:
            problems.append(f"{exc} (rendering the sample values)")
    return loaded, problems


def _check_source(
    env: jinja2.Environment, sources: Mapping[str, str], file: str, spec: TemplateSpec
) -> _Loaded | list[str]:
    """The compiled template, or the problems with its file."""
    key = f"{spec.name}{_SUFFIX}"
    where = f"prompt template {spec.name!r} ({file})"
    if key not in sources:
        return [f"{where} is missing"]
    if not sources[key].strip():
        return [f"{where} is empty"]
    try:
        tree = env.parse(sources[key], name=key)
    except jinja2.TemplateSyntaxError as exc:
        return [f"{where}: syntax error at line {exc.lineno}: {exc.message}"]
    problems = _structure_problems(tree, where)
    partials = sorted(ref for ref in meta.find_referenced_templates(tree) if ref is not None)
    for partial in partials:
        problems.extend(_partial_problems(env, sources, partial, where))
    try:  # this compiles, which names what parsing cannot: an unknown filter or test
        used = frozenset(meta.find_undeclared_variables(tree) - _GLOBALS.keys())
    except jinja2.TemplateSyntaxError as exc:  # TemplateAssertionError
        return [*problems, f"{where}: {exc.message} (line {exc.lineno})"]
    undeclared = sorted(used - spec.variables.keys())
    if undeclared:
        problems.append(
            f"{where}: uses variable(s) {', '.join(undeclared)} the training loop does not provide "
            f"(it provides {', '.join(sorted(spec.variables))})"
        )
    if problems:
        return problems
    digest = content_hash([[part, sources[part]] for part in (key, *partials)])
    try:  # a partial's own filter, compiled only here
        compiled = env.get_template(key)
    except jinja2.TemplateSyntaxError as exc:
        return [f"{where}: {exc.message} (line {exc.lineno}, {exc.name or key})"]
    return _Loaded(compiled, digest, used)


def _structure_problems(tree: nodes.Template, where: str) -> list[str]:
    """Exactly the blocks in BLOCKS, each non-empty, and nothing else that would render."""
    problems: list[str] = []
    blocks = [node for node in tree.body if isinstance(node, nodes.Block)]
    names = [block.name for block in blocks]
    for block in BLOCKS:
        if block not in names:
            problems.append(f"{where}: missing {{% block {block} %}}")
    extra = sorted(set(names) - set(BLOCKS))
    if extra:
        problems.append(f"{where}: unexpected block(s) {', '.join(extra)}; only {', '.join(BLOCKS)}")
    for block in blocks:
        if block.name in BLOCKS and _renders_nothing(block.body):
            problems.append(f"{where}: {{% block {block.name} %}} is empty")
    if any(not isinstance(node, nodes.Block) and not _renders_nothing([node]) for node in tree.body):
        problems.append(f"{where}: text outside {{% block %}} tags is never sent; move it into a block")
    return problems


def _renders_nothing(body: list[nodes.Node]) -> bool:
    """True when ``body`` is only whitespace text (comments never reach the AST)."""
    for node in body:
        if not isinstance(node, nodes.Output):
            return False
        for child in node.nodes:
            if not isinstance(child, nodes.TemplateData) or child.data.strip():
                return False
    return True


def _partial_problems(
    env: jinja2.Environment, sources: Mapping[str, str], partial: str, where: str
) -> list[str]:
    if partial not in sources:
        return [f"{where}: imports {partial!r}, which is missing from the prompt folder"]
    if not sources[partial].strip():
        return [f"{where}: imports {partial!r}, which is empty"]
    try:
        env.parse(sources[partial], name=partial)
    except jinja2.TemplateSyntaxError as exc:
        return [f"{where}: imports {partial!r}, syntax error at line {exc.lineno}: {exc.message}"]
    return []
