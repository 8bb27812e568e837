"""Subtitles: read ``.srt`` files (Video-MME wraps every line in ``<font ...>``), look up lines by time.

Missing subtitles are normal (156 of the 900 Video-MME videos have none): a missing file is an
empty :class:`Subtitles`, not an error. A malformed ``.srt`` is a :class:`DataError` naming the
file and the line. ``.srt`` is parsed here, strictly, because that is what lets an error name its
line; LongVideoBench's ``.json`` cue lists and Video-MME-v2's word-level ``.jsonl`` are read here
too; other formats (``.vtt``, ``.ass``, ``.ssa``) are read with pysubs2.
"""

from __future__ import annotations

import html
import json
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

import pysubs2

from skillharness.errors import DataError
from skillharness.video.types import Window

__all__ = ["SubtitleLine", "Subtitles", "clean_text", "load_subtitles"]

_TIME = r"(\d+):([0-5]?\d):([0-5]?\d)[,.](\d{1,3})"
_TIMING = re.compile(rf"^\s*{_TIME}\s*-->\s*{_TIME}(?:\s+.*)?$")
# A line that starts like a timing (digits, then an arrow): "A --> B" in a cue's text is text.
_TIMING_LIKE = re.compile(r"^\s*\d[\d:,.\s]*-+>")
# A real tag: a name and only name=value attributes, so "a<b and c>d" in a line is kept as text.
_ATTRIBUTE = r"""\s+[\w:-]+\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'>]+)"""
_HTML_TAG = re.compile(rf"</?[A-Za-z][A-Za-z0-9]*(?:{_ATTRIBUTE})*\s*/?>")
_ASS_OVERRIDE = re.compile(r"\{\\[^}]*\}")


@dataclass(frozen=True)
class SubtitleLine:
    """One subtitle cue: shown from ``start_s`` to ``end_s``, tags removed."""

    start_s: float
    end_s: float
    text: str


@dataclass(frozen=True)
class Subtitles:
    """The cues of one video, sorted by start time (empty when the video has no subtitles)."""

    path: Path | None
    lines: tuple[SubtitleLine, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.lines)

    def on_timeline(self, offset_s: float = 0.0, window: Window | None = None) -> Subtitles:
        """These cues on the timeline the agent sees.

        ``offset_s`` is where the file's clock stands at the video's start (LongVideoBench's
        ``starting_timestamp_for_subtitles``): a cue at file time ``t`` is shown at video time
        ``t - offset_s``. With a ``window`` only the cues shown inside it remain, cut to it and timed
        from its start, so no line from outside the clip reaches the agent.
        """
        if not offset_s and window is None:
            return self
        start, end = (window.start_s, window.end_s) if window is not None else (0.0, math.inf)
        kept = []
        for line in self.lines:
            shown_from, shown_to = line.start_s - offset_s, line.end_s - offset_s
            if shown_to <= start or shown_from >= end:  # ends before the clip, or starts after it
                continue
            kept.append(SubtitleLine(max(shown_from, start) - start, min(shown_to, end) - start, line.text))
        return Subtitles(self.path, tuple(kept))

    def overlapping(self, start_s: float, end_s: float) -> tuple[SubtitleLine, ...]:
        """Lines shown at some moment of ``[start_s, end_s]``."""
        return tuple(line for line in self.lines if line.start_s <= end_s and line.end_s >= start_s)

    def nearest(self, timestamps: Iterable[float], max_gap_s: float = 0.0) -> tuple[SubtitleLine, ...]:
        """Lines at a set of times (Video-MME's subtitle rule: the lines at the sampled frame times).

        For each timestamp: the lines on screen then; if none, the line closest in time when it is
        within ``max_gap_s`` (0 = on screen only, the Video-MME rule; ``math.inf`` = always one).
        Duplicates are dropped; the result is in time order.
        """
        chosen: set[SubtitleLine] = set()
        for t in timestamps:
            showing = [line for line in self.lines if line.start_s <= t <= line.end_s]
            if showing:
                chosen.update(showing)
            elif self.lines and max_gap_s > 0:
                gap, line = min((_gap(line, t), line) for line in self.lines)
                if gap <= max_gap_s:
                    chosen.add(line)
        return tuple(sorted(chosen, key=lambda line: (line.start_s, line.end_s, line.text)))


def _gap(line: SubtitleLine, t: float) -> float:
    return max(line.start_s - t, t - line.end_s, 0.0)


def clean_text(text: str) -> str:
    """Remove ``<font>``/``<i>``-style and ``{\\...}`` tags, decode HTML entities (``&amp;``) and
    collapse whitespace to single spaces."""
    text = _ASS_OVERRIDE.sub("", _HTML_TAG.sub("", text.replace("\\N", " ").replace("\\n", " ")))
    return " ".join(html.unescape(text).split())


def load_subtitles(path: Path | str | None) -> Subtitles:
    """Read a subtitle file; a missing file (or ``None``) gives empty subtitles.

    Raises:
        DataError: the file exists but is malformed (names the file and the line).
    """
    if path is None:
        return Subtitles(None)
    path = Path(path)
    if not path.is_file():
        return Subtitles(path)
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: not UTF-8 text (byte {exc.start})", file=str(path)) from exc
    readers = {".srt": parse_srt, ".json": parse_json_cues, ".jsonl": parse_jsonl_words}
    cues = readers.get(path.suffix.lower(), _parse_other)(text, path)
    lines = [SubtitleLine(s, e, t) for s, e, raw in cues if (t := clean_text(raw))]
    return Subtitles(path, tuple(sorted(lines, key=lambda line: (line.start_s, line.end_s))))


def parse_srt(text: str, path: Path) -> list[tuple[float, float, str]]:
    """Strict SRT parse: ``[(start_s, end_s, raw_text)]``. Raises DataError naming file and line."""
    cues: list[tuple[float, float, list[str]]] = []
    for block in _blocks(text.splitlines()):
        first_no, first = block[0]
        body = block
        if first.strip().isdigit():
            if len(block) < 2 or not _TIMING_LIKE.search(block[1][1]):
                _fail(path, first_no, "a cue number must be followed by a timing line 'HH:MM:SS,mmm --> ...'")
            body = block[1:]
        timing_no, timing = body[0]
        if not _TIMING_LIKE.search(timing):
            if not cues:
                _fail(path, timing_no, f"expected a cue number or timing line, got {timing.strip()[:40]!r}")
            _no_timing_in_text(block, path)
            cues[-1][2].extend(["", *(line for _, line in block)])  # a blank line inside a cue's text
            continue
        start, end = _timing(timing, path, timing_no)
        _no_timing_in_text(body[1:], path)
        cues.append((start, end, [line for _, line in body[1:]]))
    if not cues and text.strip():
        _fail(path, 1, "no subtitle cues found")
    return [(start, end, "\n".join(lines)) for start, end, lines in cues]


def _no_timing_in_text(lines: Sequence[tuple[int, str]], path: Path) -> None:
    for number, line in lines:
        if _TIMING_LIKE.search(line):
            _fail(
                path, number, f"timing line {line.strip()[:60]!r} inside a cue's text (missing blank line?)"
            )


def _blocks(lines: Sequence[str]) -> list[list[tuple[int, str]]]:
    blocks: list[list[tuple[int, str]]] = [[]]
    for number, line in enumerate(lines, start=1):
        if line.strip():
            blocks[-1].append((number, line))
        elif blocks[-1]:
            blocks.append([])
    return [block for block in blocks if block]


def _timing(line: str, path: Path, number: int) -> tuple[float, float]:
    match = _TIMING.match(line)
    if match is None:
        _fail(path, number, f"bad timing line {line.strip()[:60]!r} (want 'HH:MM:SS,mmm --> HH:MM:SS,mmm')")
    g = match.groups()
    start, end = _ms(*g[:4]) / 1000, _ms(*g[4:]) / 1000
    if end < start:
        _fail(path, number, f"cue ends ({end:.3f} s) before it starts ({start:.3f} s)")
    return start, end


def _ms(hours: str, minutes: str, seconds: str, fraction: str) -> int:
    # Whole milliseconds, so 00:00:01,234 is exactly 1234 / 1000; ",5" means 500 ms, as players read it.
    return ((int(hours) * 60 + int(minutes)) * 60 + int(seconds)) * 1000 + int(fraction.ljust(3, "0"))


def parse_json_cues(text: str, path: Path) -> list[tuple[float, float, str]]:
    """LongVideoBench's subtitle JSON: a list of ``{"start": "HH:MM:SS.mmm", "end": ..., "line":
    ...}`` or ``{"timestamp": [start_s, end_s], "text": ...}`` (an end that is not a number runs to
    the next cue, or a second past its start for the last; upstream reads it as the video's end).
    Times are on the file's clock; ``Question.subtitle_offset`` moves them onto the video's."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        _fail(path, exc.lineno, f"not valid JSON: {exc.msg}")
    if not isinstance(data, list):
        _fail(path, 1, f"expected a JSON list of cues, got {type(data).__name__}")
    cues: list[tuple[float, float, str]] = []
    for number, cue in enumerate(data, start=1):
        try:
            if "timestamp" in cue:
                start, end = cue["timestamp"]
                start = float(start)
                end = float(end) if isinstance(end, int | float) else math.nan
                words = cue["text"]
            else:
                start, end, words = _clock_s(cue["start"]), _clock_s(cue["end"]), cue["line"]
        except (TypeError, KeyError, ValueError) as exc:
            _fail(path, 1, f"cue {number} is not {{start, end, line}} or {{timestamp, text}}: {exc!r}")
        cues.append((start, end, str(words)))
    return [
        (start, end if math.isfinite(end) else (cues[i + 1][0] if i + 1 < len(cues) else start + 1.0), words)
        for i, (start, end, words) in enumerate(cues)
    ]


def _clock_s(stamp: object) -> float:
    hours, minutes, seconds = str(stamp).split(":")
    return int(hours) * 3600 + int(minutes) * 60 + float(seconds)


def parse_jsonl_words(text: str, path: Path) -> list[tuple[float, float, str]]:
    """Video-MME-v2's word-level subtitles: one ``{"text", "start_time", "end_time"}`` per line."""
    cues: list[tuple[float, float, str]] = []
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
            cues.append((float(entry["start_time"]), float(entry["end_time"]), str(entry["text"])))
        except (json.JSONDecodeError, TypeError, KeyError, ValueError) as exc:
            _fail(path, number, f"not a JSON line with text, start_time and end_time: {exc!r}")
    return cues


def _parse_other(text: str, path: Path) -> list[tuple[float, float, str]]:
    try:
        subs = pysubs2.SSAFile.from_string(text)
    except (pysubs2.exceptions.Pysubs2Error, ValueError) as exc:
        raise DataError(f"{path}: cannot parse subtitles: {exc}", file=str(path)) from exc
    return [
        (e.start / 1000, e.end / 1000, e.plaintext)
        for e in subs
        if math.isfinite(e.start) and not e.is_comment
    ]


def _fail(path: Path, line: int, why: str) -> NoReturn:
    raise DataError(f"{path}:{line}: malformed subtitles: {why}", file=str(path), line=line)
