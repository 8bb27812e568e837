"""Answer normalization (audit P0-4): whatever shape the model answers in, one letter or a reason.

A pure function that never raises. Accepted shapes (all → ``"B"``): ``"B"``, ``"(b)"``,
``"B. Candles"``, ``"The answer is B."``, ``{"answer": "B"}``, ``["B"]``, ``{"answer": ["B"]}``,
the JSON text of any of those (also inside a Markdown code fence), and the option text itself
(``"Candles"``, or ``5`` for an option ``"B. 5"``). Text is NFKC-normalized first (full-width
``"Ｂ"`` is ``"B"``). Letters inside a quoted option text do not count: with an option
``"B. He picks option A"``, ``"B) He picks option A"`` is ``B``. Several different letters, a
letter that is not an option, or nothing recognisable is a parse error with a reason.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = ["Normalized", "normalize_answer"]

_MAX_DEPTH = 6
_MAX_CHARS = 20_000  # longer "answers" are not answers; cap the regex work
_ANSWER_KEYS = ("answer", "letter", "choice", "option", "final_answer")
_FENCE = re.compile(r"^```[a-zA-Z]*\s*(.*?)\s*```$", re.DOTALL)
_BARE = re.compile(r"^[\s\(\[\{\*\"'`]*([A-Za-z])[\s\)\]\}\*\"'`.:]*$")
_LEADING = re.compile(r"^[\s\*]*[\(\[]?([A-Z])\s*[\)\]\.:]\s+\S")
# Explicit mentions inside free text. Lower-case letters count only when bracketed: "a" is a word.
_BRACKETED = re.compile(r"[\(\[]\s*([A-Za-z])\s*[\)\]]")
# Between the letters of an alternative: "B or C", "B/C", "B, C", "B, C, or D".
_SEPARATOR = r"\s*(?:,\s*(?:(?:or|and)\b)?|/|&|\bor\b|\band\b)\s*"
# A cue and the letter after it, with any letters it is offered as an alternative to
# ("Answer: B or C" names two letters, not B).
_CUED = re.compile(
    rf"\b(?:answer|option|choice)\b(?:\s+is)?\s*[:=]?\s*[\(\[\*\"']*"
    rf"([A-Z](?:{_SEPARATOR}[A-Z](?![a-z']))*)\b(?![a-z'])",
    re.IGNORECASE,
)
_LETTER_LIST = re.compile(rf"^\s*[A-Z](?:{_SEPARATOR}[A-Z])+\s*\.?\s*$")
_LONE_CAPITAL = re.compile(r"\b[A-Z]\b")
_OPTION_PREFIX = re.compile(r"^\s*[\(\[]?[A-Za-z][\)\]\.:]\s*")
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Normalized:
    """The normalized answer: ``letter`` when it parsed, else ``error`` says why."""

    letter: str | None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.letter is not None


def normalize_answer(raw: object, letters: Sequence[str], options: Sequence[str] = ()) -> Normalized:
    """Map a model's answer of any shape to one of ``letters``, or a parse error.

    Args:
        raw: whatever the model produced (text, parsed JSON, a tool argument ...).
        letters: the option letters of the question, e.g. ``("A", "B", "C", "D")``.
        options: the options verbatim (``"B. Candles"``), to recognise an answer given as text.
    """
    try:
        allowed = tuple(str(letter).upper() for letter in letters)
        found = _letters_in(raw, allowed, tuple(str(o) for o in options), 0)
    except Exception as exc:  # a pure function must never let an odd object escape
        return Normalized(None, f"unreadable answer ({type(exc).__name__})")
    if isinstance(found, str):
        return Normalized(None, found)
    if not found:
        return Normalized(None, f"no option letter found in {_preview(raw)}")
    if len(found) > 1:
        return Normalized(None, f"several different letters {sorted(found)} in {_preview(raw)}")
    (letter,) = found
    if letter not in allowed:
        return Normalized(None, f"letter {letter!r} is not among the options {list(allowed)}")
    return Normalized(letter)


def _letters_in(
    raw: object, allowed: tuple[str, ...], options: tuple[str, ...], depth: int
) -> set[str] | str:
    """The set of letters ``raw`` names, or a reason string when its shape is not an answer."""
    if depth > _MAX_DEPTH:
        return "answer nested too deeply"
    if isinstance(raw, int | float) and not isinstance(raw, bool):
        # A number answers only by being an option's text ("How many ...? B. 5").
        by_option = _match_option_text(_number_text(raw), allowed, options)
        return {by_option} if by_option else f"not an answer: {_preview(raw)}"
    if raw is None or isinstance(raw, bool):
        return f"not an answer: {_preview(raw)}"
    if isinstance(raw, str):
        return _letters_in_text(raw, allowed, options, depth)
    if isinstance(raw, Mapping):
        for key, value in raw.items():
            if isinstance(key, str) and key.strip().lower() in _ANSWER_KEYS:
                return _letters_in(value, allowed, options, depth + 1)
        if len(raw) == 1 and isinstance(wrapped := next(iter(raw.values())), Mapping):
            return _letters_in(wrapped, allowed, options, depth + 1)  # {"result": {"answer": "B"}}
        return f"no answer field in {_preview(raw)}"
    if isinstance(raw, Sequence | set | frozenset) and not isinstance(raw, bytes | bytearray):
        found: set[str] = set()
        for item in raw:
            sub = _letters_in(item, allowed, options, depth + 1)
            if isinstance(sub, str):
                return sub
            found |= sub
        return found
    return f"not an answer: {_preview(raw)}"


def _letters_in_text(
    text: str, allowed: tuple[str, ...], options: tuple[str, ...], depth: int
) -> set[str] | str:
    if len(text) > _MAX_CHARS:
        return f"answer too long ({len(text)} characters)"
    text = _plain(text).strip()
    if not text:
        return "empty answer"
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1).strip()
    if text[:1] in '{["':
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = None
        if parsed is not None:  # a JSON document: judge its structure, not its text
            return _letters_in(parsed, allowed, options, depth + 1)
    bare = _BARE.match(text)
    if bare:
        return {bare.group(1).upper()}
    by_option = _match_option_text(text, allowed, options)
    if by_option:
        return {by_option}
    text = _without_option_texts(text, options[: len(allowed)])
    if bare := _BARE.match(text):  # "B) <option B's text>"
        return {bare.group(1).upper()}
    if _LETTER_LIST.match(text):
        return set(re.findall(r"[A-Z]", text))
    leading = _LEADING.match(text)
    found = {leading.group(1)} if leading else set()
    # A line that is only a letter ("B\n\nExplanation: ..."); every such line counts ("A\nB").
    found |= {alone.group(1).upper() for line in text.splitlines() if (alone := _BARE.match(line))}
    found |= {m.group(1).upper() for m in _BRACKETED.finditer(text)}
    for cued in _CUED.finditer(text):
        if cued.group(1)[0].isupper():  # "answer is a dog": a lower-case "a" is a word
            found |= set(_LONE_CAPITAL.findall(cued.group(1)))
    return found


def _match_option_text(text: str, allowed: tuple[str, ...], options: tuple[str, ...]) -> str | None:
    """The letter whose option text ``text`` is (ignoring case, spacing and end punctuation)."""
    wanted = _canon(text)
    hits = {
        allowed[index]
        for index, option in enumerate(options[: len(allowed)])
        if wanted in (_canon(option), _canon(_OPTION_PREFIX.sub("", option, count=1)))
    }
    return hits.pop() if len(hits) == 1 else None


def _without_option_texts(text: str, options: tuple[str, ...]) -> str:
    """``text`` with every quoted option text cut out, so letters inside an option are not read."""
    bodies = {_OPTION_PREFIX.sub("", _plain(option), count=1).strip().rstrip(".!") for option in options}
    for body in sorted((b for b in bodies if len(b) > 1), key=len, reverse=True):
        words = r"\s+".join(re.escape(word) for word in body.split())
        text = re.sub(rf"(?<!\w){words}(?!\w)", " ", text, flags=re.IGNORECASE)
    return text.strip()


def _plain(text: str) -> str:
    """NFKC (full-width letters and brackets become ASCII) without invisible format characters."""
    return "".join(ch for ch in unicodedata.normalize("NFKC", text) if unicodedata.category(ch) != "Cf")


def _number_text(value: float) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _canon(text: str) -> str:
    return _SPACE.sub(" ", _plain(text)).strip().strip(".!").strip().casefold()


def _preview(raw: object) -> str:
    try:
        shown = repr(raw)
    except Exception:
        shown = f"<{type(raw).__name__}>"
    return shown if len(shown) <= 80 else shown[:77] + "..."
