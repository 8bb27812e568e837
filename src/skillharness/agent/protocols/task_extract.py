"""The answer extractors of lmms-eval v0.7.2's per-benchmark tasks, chosen by name from the
benchmark's adapter (``lmms_eval.extractor``).

Each takes the reply after the evaluator's ``--reasoning_tags`` stripping (done once, by the
caller), the letters the task searches (``choices``) and the option texts it matches words
against (``answers``, letter to text), and returns the letter the task reads, or ``""``.

Where a task falls back to ``random.choice`` (EgoSchema's and NExT-QA's MMMU-style parsers,
LongVideoBench's), the reply is returned as unread (``""``): a reproducible score may not
depend on a random draw, and upstream's seeded draw depends on every earlier draw of the
process. An unread reply is wrong, in the denominator, as upstream's draw is wrong four times
in five (docs/protocols.md, "Known deviations").

Sources, at the pinned commit: ``lmms_eval/tasks/mvbench/utils.py`` (``mcq_acc``),
``lmms_eval/tasks/egoschema/utils.py`` and ``lmms_eval/tasks/nextqa/utils.py``
(``parse_multi_choice_response``), ``lmms_eval/tasks/longvideobench/utils.py``
(``parse_multi_choice_response``), ``lmms_eval/tasks/videomme_v2/utils.py``
(``extract_characters_regex``), ``lmms_eval/tasks/_task_utils/mcq_extract.py``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence

from skillharness.agent.protocols.extract import _first_capital, lmms_eval_letter

__all__ = [
    "LONGVIDEOBENCH_PREFIXES",
    "TASK_EXTRACTORS",
    "VIDEOMME_V2_PREFIXES",
    "TaskExtractor",
    "egoschema_mmmu",
    "longvideobench_first",
    "mvbench_mcq_acc",
    "nextqa_mmmu",
    "videomme_v2_first",
]

TaskExtractor = Callable[[str, Sequence[str], Mapping[str, str]], str]

LONGVIDEOBENCH_PREFIXES = (
    "The best answer is",
    "The correct answer is",
    "The answer is",
    "The answer",
    "The best option is",
    "The correct option is",
    "Best answer:",
    "Best option:",
)
VIDEOMME_V2_PREFIXES = (
    "The best answer is",
    "The correct answer is",
    "The answer is",
    "The answer",
    "The best option is",
    "The correct option is",
    "Final Answer:",
    "Best answer:",
    "Best option:",
    "Answer:",
    "Option:",
)

# mcq_acc's text normalisation, copied as written: the look-ahead "(?!<=\d)" is a typo for a
# look-behind upstream and is kept, since it is what runs.
_PERIOD_STRIP = re.compile(r"(?!<=\d)(\.)(?!\d)")
_COMMA_STRIP = re.compile(r"(\d)(\,)(\d)")
_PUNCT = (
    *(";", "/", "[", "]", '"', "{", "}", "(", ")", "=", "+", "\\", "_", "-", ">", "<", "@", "`"),
    *(",", "?", "!"),
)
_MMMU_STRIP = (",", ".", "!", "?", ";", ":", "'")


def _class(choices: Sequence[str]) -> str:
    return "[" + "".join(re.escape(c) for c in choices) + "]"


def _punctuation(text: str) -> str:
    out = text
    for mark in _PUNCT:
        if (mark + " " in text or " " + mark in text) or _COMMA_STRIP.search(text) is not None:
            out = out.replace(mark, "")
        else:
            out = out.replace(mark, " ")
    # Upstream passes re.UNICODE where sub() takes its count: at most 32 periods go.
    return _PERIOD_STRIP.sub("", out, count=int(re.UNICODE))


def mvbench_mcq_acc(reply: str, choices: Sequence[str], answers: Mapping[str, str]) -> str:
    """MVBench's ``mcq_acc`` reading of a reply: ``X. text`` at the start, else the first
    standalone letter after lower-casing (so the article "a" reads as ``A``). A reply it reads
    as no letter can never equal the gold letter, so it is ``""`` here."""
    del answers  # mcq_acc reads letters only
    letters = _class(choices)
    match = re.match(rf"^({letters})\.\s*(.+)$", reply.strip(), re.IGNORECASE)
    if match:
        return match.group(1).upper()
    text = reply.replace("\n", " ").replace("\t", " ").strip()
    text = _punctuation(text)
    text = text.strip("'").strip('"').strip(")").strip("(").strip().lower()
    found = re.search(rf"\b({letters})\b", text, re.IGNORECASE)
    return found.group(1).upper() if found else ""


def _mmmu_padded(reply: str) -> str:
    for char in _MMMU_STRIP:
        reply = reply.strip(char)
    return f" {reply} "  # upstream pads to avoid partial matches


def _by_text(response: str, answers: Mapping[str, str]) -> list[str]:
    """The letters whose option text occurs in a reply of more than five words."""
    if len(response.split()) <= 5:
        return []
    return [letter for letter, text in answers.items() if text.lower() in response.lower()]


def _text_positions(response: str, letters: list[str], answers: Mapping[str, str]) -> list[int]:
    return [response.lower().rfind(answers[letter].lower()) for letter in letters]


def egoschema_mmmu(reply: str, choices: Sequence[str], answers: Mapping[str, str]) -> str:
    """EgoSchema's MMMU parser: ``(X)``, ``X `` and ``X.`` candidates together, else option texts
    in a reply of more than five words; of several, the one whose last occurrence comes first."""
    response = _mmmu_padded(reply)
    shapes = [f"({c})" for c in choices if f"({c})" in response]
    shapes += [f"{c} " for c in choices if f"{c} " in response]
    shapes += [f"{c}." for c in choices if f"{c}." in response]
    if shapes:
        positions = [response.rfind(shape) for shape in shapes]
    else:
        shapes = _by_text(response, answers)
        positions = _text_positions(response, shapes, answers)
    if not shapes:
        return ""  # upstream: random.choice
    chosen = shapes[positions.index(min(positions))]  # np.argmin: the first of equal minima
    return chosen.replace("(", "").replace(")", "").replace(".", "").strip()


def nextqa_mmmu(reply: str, choices: Sequence[str], answers: Mapping[str, str]) -> str:
    """NExT-QA's MMMU parser: ``(X)``; only if none, ``X ``; only if none, ``X.``; else option
    texts in a reply of more than five words; of several, the last."""
    response = _mmmu_padded(reply)
    bracketed = [c for c in choices if f"({c})" in response]
    letters = (
        bracketed
        or [c for c in choices if f"{c} " in response]
        or [c for c in choices if f"{c}." in response]
    )
    by_text = not letters
    if by_text:
        letters = _by_text(response, answers)
    if not letters:
        return ""  # upstream: random.choice
    if len(letters) == 1:
        return letters[0]
    if by_text:
        positions = _text_positions(response, letters, answers)
    elif bracketed:
        positions = [response.rfind(f"({c})") for c in letters]
    else:  # " X " even when the candidates came from "X." (then every position may be -1)
        positions = [response.rfind(f" {c} ") for c in letters]
    return letters[positions.index(max(positions))]  # np.argmax: the first of equal maxima


def longvideobench_first(reply: str, choices: Sequence[str], answers: Mapping[str, str]) -> str:
    """LongVideoBench's parser: answer phrases deleted, then the first choice letter anywhere."""
    del answers
    return _first_capital(reply, LONGVIDEOBENCH_PREFIXES, choices)


def videomme_v2_first(reply: str, choices: Sequence[str], answers: Mapping[str, str]) -> str:
    """Video-MME-v2's ``extract_characters_regex``: a longer phrase list, the first letter."""
    del answers
    return _first_capital(reply, VIDEOMME_V2_PREFIXES, choices)


def _mcq_answer(reply: str, choices: Sequence[str], answers: Mapping[str, str]) -> str:
    del answers
    return lmms_eval_letter(reply, choices)


TASK_EXTRACTORS: dict[str, TaskExtractor] = {
    "extract_mcq_answer": _mcq_answer,
    "mvbench_mcq_acc": mvbench_mcq_acc,
    "egoschema_mmmu": egoschema_mmmu,
    "nextqa_mmmu": nextqa_mmmu,
    "longvideobench_first": longvideobench_first,
    "videomme_v2_first": videomme_v2_first,
}
