"""Skill documents: three regions, each with exactly one owner.

A document is ``body`` + the momentum marker line + ``momentum`` + the appendix marker line +
``appendix``. Parsing and rendering are byte-exact inverses. Ownership is enforced by the types,
not by checks at call sites:

- evolution can only hand over an :class:`~skillharness.skills.edits.EditSet`, which has no way to
  name anything but the body (see :mod:`skillharness.skills.patch`);
- only a :class:`MomentumUpdate` can replace the momentum region;
- the appendix has no setter at all: it is fixed when a document is authored or parsed.
"""

from __future__ import annotations

from pydantic import field_validator

from skillharness.errors import SkillError
from skillharness.skills.markers import APPENDIX_MARKER, MARKER_LIKE, MOMENTUM_MARKER
from skillharness.util.model import StrictModel

__all__ = ["MomentumUpdate", "SkillDocument", "ensure_trailing_newline"]


def ensure_trailing_newline(text: str) -> str:
    """Return ``text`` ending in ``\\n`` (empty stays empty), so a following marker keeps its own line."""
    return text if not text or text.endswith("\n") else text + "\n"


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


class MomentumUpdate(StrictModel):
    """The only thing that may replace a document's momentum region (written by slow momentum).

    The guidance must already be sanitized: marker-like text is rejected here as a last line of
    defence, because it could forge a region boundary.
    """

    text: str

    @classmethod
    def sanitized(cls, guidance: str, *, max_chars: int = 2000) -> MomentumUpdate:
        """Build an update from raw model guidance: drop marker-like lines, trim, cap the length."""
        # A lone surrogate (from a JSON "\ud800" escape) cannot be stored as UTF-8: replace it.
        guidance = guidance.encode("utf-8", "replace").decode("utf-8")
        lines = [line for line in guidance.splitlines() if not MARKER_LIKE.search(line)]
        text = "\n".join(lines).strip()[:max_chars].rstrip()
        # Joining lines can form a marker across a line break ("<!--\nskillharness:"); removing one
        # can form another, so repeat until none is left (the text shrinks every round).
        while MARKER_LIKE.search(text):
            text = MARKER_LIKE.sub("", text)
        return cls(text=text)

    @field_validator("text")
    @classmethod
    def _no_markers(cls, value: str) -> str:
        if MARKER_LIKE.search(value):
            raise ValueError("momentum guidance contains a skillharness marker-like sequence")
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:  # it would break every later hash and save of the bundle
            raise ValueError(f"momentum guidance is not encodable as UTF-8: {exc.reason}") from None
        return value


_REGIONS = ("_body", "_momentum_line", "_momentum", "_appendix_line", "_appendix")
_KEY = object()  # only this module can build a SkillDocument from raw regions


class SkillDocument:
    """An immutable, parsed skill document. Build one with :meth:`parse` or :meth:`author`.

    The constructor is private (it needs a module-private key), attributes cannot be set, and
    there is no ``dataclasses.replace``: the only ways to a changed document are the two
    owner-specific writers below and :func:`skillharness.skills.patch.apply_edit_set`.
    """

    __slots__ = (*_REGIONS, "source")
    _body: str
    _momentum_line: str
    _momentum: str
    _appendix_line: str
    _appendix: str
    source: str

    def __init__(self, key: object, regions: tuple[str, str, str, str, str], source: str) -> None:
        if key is not _KEY:
            raise TypeError("build a SkillDocument with SkillDocument.parse() or SkillDocument.author()")
        for name, value in zip(_REGIONS, regions, strict=True):
            object.__setattr__(self, name, value)
        object.__setattr__(self, "source", source)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"SkillDocument is immutable (cannot set {name!r})")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"SkillDocument is immutable (cannot delete {name!r})")

    def _regions(self) -> tuple[str, str, str, str, str]:
        return (self._body, self._momentum_line, self._momentum, self._appendix_line, self._appendix)

    def __reduce__(self) -> tuple[object, tuple[object, ...]]:
        # copy, deepcopy and pickle rebuild through the private constructor.
        return (_rebuild, (self._regions(), self.source))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SkillDocument) and self._regions() == other._regions()

    def __hash__(self) -> int:
        return hash(self._regions())

    def __repr__(self) -> str:
        sizes = (
            f"body={len(self._body)}, momentum={len(self._momentum)}, appendix={len(self._appendix)} chars"
        )
        return f"SkillDocument(source={self.source!r}, {sizes})"

    # --- construction -------------------------------------------------------------------------
    @classmethod
    def author(
        cls, body: str, appendix: str, *, momentum: str = "", source: str = "<memory>"
    ) -> SkillDocument:
        """Compose a new document by hand (initial bundles); regions get a trailing newline."""
        text = (
            ensure_trailing_newline(body)
            + MOMENTUM_MARKER
            + "\n"
            + ensure_trailing_newline(momentum)
            + APPENDIX_MARKER
            + "\n"
            + appendix
        )
        return cls.parse(text, source=source)

    @classmethod
    def parse(cls, text: str, *, source: str = "<memory>") -> SkillDocument:
        """Split ``text`` into regions.

        Raises:
            SkillError: a marker is missing, duplicated or out of order, or a line merely looks
                like a marker; the message names ``source`` and the line.
        """
        momentum, appendix = _find_markers(text, source)
        m_start, m_end = momentum
        a_start, a_end = appendix
        regions = (
            text[:m_start],
            text[m_start:m_end],
            text[m_end:a_start],
            text[a_start:a_end],
            text[a_end:],
        )
        return cls(_KEY, regions, source)

    # --- reading ------------------------------------------------------------------------------
    @property
    def body(self) -> str:
        """The region evolution edits."""
        return self._body

    @property
    def momentum(self) -> str:
        """The region only slow momentum writes."""
        return self._momentum

    @property
    def appendix(self) -> str:
        """The frozen, hand-written region."""
        return self._appendix

    @property
    def body_end(self) -> int:
        """Offset in :meth:`render` coordinates where the body ends (the momentum marker line starts)."""
        return len(self._body)

    def render(self) -> str:
        """The full document text; ``SkillDocument.parse(doc.render()) == doc``, byte for byte."""
        return self._body + self._momentum_line + self._momentum + self._appendix_line + self._appendix

    # --- the two owner-specific writers -------------------------------------------------------
    def with_momentum(self, update: MomentumUpdate) -> SkillDocument:
        """A copy whose momentum region is ``update.text``; body and appendix are untouched."""
        return _replace(self, momentum=ensure_trailing_newline(update.text))

    def _with_body(self, body: str) -> SkillDocument:
        # Private on purpose: the only caller is skills.patch, after every refusal rule passed.
        if MARKER_LIKE.search(body):
            raise SkillError(f"{self.source}: refusing a body containing a marker-like sequence")
        updated = _replace(self, body=ensure_trailing_newline(body))
        # Belt and braces: the rendered result must parse back to exactly these regions.
        if SkillDocument.parse(updated.render(), source=self.source) != updated:
            raise SkillError(f"{self.source}: an edited body would change the region layout")
        return updated


def _rebuild(regions: tuple[str, str, str, str, str], source: str) -> SkillDocument:
    return SkillDocument(_KEY, regions, source)


def _replace(doc: SkillDocument, *, body: str | None = None, momentum: str | None = None) -> SkillDocument:
    regions = (
        doc.body if body is None else body,
        doc._momentum_line,
        doc.momentum if momentum is None else momentum,
        doc._appendix_line,
        doc.appendix,
    )
    return SkillDocument(_KEY, regions, doc.source)


def _find_markers(text: str, source: str) -> tuple[tuple[int, int], tuple[int, int]]:
    """Locate the two exact marker lines as (start, end) spans including their terminator."""
    found: dict[str, tuple[int, int]] = {}
    exact_starts: set[int] = set()
    offset = 0
    for lineno, raw in enumerate(text.split("\n"), start=1):
        content = raw[:-1] if raw.endswith("\r") else raw
        end = min(offset + len(raw) + 1, len(text))
        if content in (MOMENTUM_MARKER, APPENDIX_MARKER):
            if content in found:
                first = _line_of(text, found[content][0])
                raise SkillError(
                    f"{source}:{lineno}: duplicate marker {content!r} (first at line {first})",
                    file=source,
                    line=lineno,
                )
            if content == MOMENTUM_MARKER and APPENDIX_MARKER in found:
                raise SkillError(
                    f"{source}:{lineno}: momentum marker after the appendix marker "
                    f"(line {_line_of(text, found[APPENDIX_MARKER][0])})",
                    file=source,
                    line=lineno,
                )
            found[content] = (offset, end)
            exact_starts.add(offset)
        offset += len(raw) + 1
    for match in MARKER_LIKE.finditer(text):
        if match.start() not in exact_starts:
            lineno = _line_of(text, match.start())
            raise SkillError(
                f"{source}:{lineno}: marker-like text that is not an exact marker line",
                file=source,
                line=lineno,
            )
    for marker in (MOMENTUM_MARKER, APPENDIX_MARKER):
        if marker not in found:
            lines = text.count("\n") + 1
            raise SkillError(
                f"{source}: missing marker line {marker!r} (searched lines 1-{lines})",
                file=source,
                line=None,
            )
    return found[MOMENTUM_MARKER], found[APPENDIX_MARKER]
