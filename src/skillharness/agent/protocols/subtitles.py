"""Subtitle rules of the reference evaluations: which cue texts a prompt shows, in which order.

- lmms-eval (``lmms_eval/tasks/videomme/utils.py``, ``videomme_doc_to_text_subtitle``): the file
  is cut into blocks at blank lines; a block's second line is the timing and its remaining lines,
  joined by spaces, the text; blocks with the same timing keep the last text. Each cue covers the
  frames ``[int(start * fps), int(end * fps))``. The cues that hold one of 32 ``linspace`` frame
  indices are kept, deduplicated through a Python ``set`` (so their order is CPython's set order
  over cue positions), and each shows only the text inside its first
  ``<font color="white" size=".72c">`` tag; a cue without one is dropped. No file: the text
  "No subtitles available".
- VLMEvalKit (``vlmeval/dataset/videomme.py``, ``build_prompt``) and the tool the Video-MME
  README links (``look4u-ok/video-slicer`` ``slice_and_extract.py``) share one rule: the file is
  read with pysubs2 (which drops the ``<font>`` tags and keeps HTML entities); for each sampled
  frame the first cue with ``start < t < end`` (``t`` the frame's time in whole milliseconds)
  gives its text with ``\\N`` as a space; frames without a cue add nothing; repeats are kept
  (:func:`first_cue_subtitles`). No file: no subtitle text at all.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import pysubs2

from skillharness.agent.protocols.frames import linspace_indices
from skillharness.errors import DataError

__all__ = [
    "LMMS_EVAL_NO_SUBTITLES",
    "LMMS_EVAL_SUBTITLE_FRAMES",
    "first_cue_subtitles",
    "lmms_eval_cues",
    "lmms_eval_subtitles",
]

LMMS_EVAL_NO_SUBTITLES = "No subtitles available"
LMMS_EVAL_SUBTITLE_FRAMES = 32  # frame_num of the task's default lmms_eval_specific_kwargs
_FONT = re.compile(r'<font color="white" size=".72c">(.*?)</font>')


def _clock(value: str, path: Path) -> float:
    try:
        hours, minutes, rest = value.split(":")
        seconds, millis = rest.split(",")
        return int(hours) * 3600 + int(minutes) * 60 + int(seconds) + int(millis) / 1000
    except ValueError as exc:
        raise DataError(f"{path}: timing {value!r} is not HH:MM:SS,mmm", file=str(path)) from exc


def lmms_eval_cues(path: Path) -> list[tuple[float, float, str]]:
    """The cues of an ``.srt`` as lmms-eval reads them: ``[(start_s, end_s, text)]`` in file order."""
    # Text mode, as the reference opens it: "\r\n" reads as "\n".
    text = path.read_text(encoding="utf-8")
    cues: dict[tuple[float, float], str] = {}
    for block in text.split("\n\n"):
        lines = block.split("\n")
        if not block.strip() or len(lines) < 3:
            continue
        parts = lines[1].split(" --> ")
        if len(parts) != 2:
            raise DataError(f"{path}: {lines[1]!r} is not a timing line 'A --> B'", file=str(path))
        cues[(_clock(parts[0], path), _clock(parts[1], path))] = " ".join(lines[2:])
    return [(start, end, text) for (start, end), text in cues.items()]


def lmms_eval_subtitles(
    path: Path | None, *, fps: float, total_frames: int, frame_num: int = LMMS_EVAL_SUBTITLE_FRAMES
) -> str:
    """The subtitle text lmms-eval puts under "This video's subtitles are listed below:"."""
    if path is None or not path.is_file():
        return LMMS_EVAL_NO_SUBTITLES
    spans = [(int(start * fps), int(end * fps), text) for start, end, text in lmms_eval_cues(path)]
    hits = [
        position
        for frame in linspace_indices(total_frames, frame_num)
        for position, (first, last, _) in enumerate(spans)
        if first <= frame < last
    ]
    # The reference deduplicates with list(set(...)); the same operation gives the same order.
    kept = list(set(hits))
    texts = [found[0] for position in kept if (found := _FONT.findall(spans[position][2]))]
    return "\n".join(texts)


def first_cue_subtitles(path: Path | None, *, fps: float, indices: Sequence[int]) -> str:
    """The subtitle text VLMEvalKit formats into its prompt, and the linked tool writes to its
    ``subtitles.txt`` ('' without a subtitle file)."""
    if path is None or not path.is_file():
        return ""
    try:
        subs = pysubs2.load(str(path), encoding="utf-8")
    except (pysubs2.exceptions.Pysubs2Error, ValueError, UnicodeDecodeError) as exc:
        raise DataError(f"{path}: cannot parse subtitles: {exc}", file=str(path)) from exc
    lines: list[str] = []
    for index in indices:
        now = pysubs2.make_time(fps=fps, frames=index)
        text = next((sub.text.replace("\\N", " ") for sub in subs if sub.start < now < sub.end), "")
        if text.strip():
            lines.append(text)
    return "\n".join(lines)
