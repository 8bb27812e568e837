"""The answer extractors of the three reference scorers, each as its pinned version runs it.

Each function returns the letter the reference reads from a reply, or "" when it reads none; what
a reference then does with "" (wrong, or left out of the denominator) is the scorer's rule, kept
in :mod:`skillharness.infer.scoring`. Versions and paths are in docs/protocols.md.

- **lmms-eval v0.7.2** (``lmms_eval/tasks/videomme/utils.py`` ``extract_characters_regex``, which
  calls ``lmms_eval/tasks/_task_utils/mcq_extract.py`` ``extract_mcq_answer`` with choices A-D),
  after the evaluator's default ``--reasoning_tags`` stripping (``lmms_eval/api/reasoning.py``).
  A ranked search: every letter gets candidates in several formats (``(B)``, ``B.``, ``B:``,
  ``B)``, ``B `` followed by a space, after an answer phrase, a standalone letter at the start or
  the end); the highest-ranked format wins, and within it the latest position. Only when no
  format matches does any capital A-D count, again the latest.
- **VLMEvalKit** main (``vlmeval/dataset/utils/videomme.py`` ``extract_characters_regex``): strip,
  delete a list of answer prefixes, give up on more than ten words without a capital A-D, else the
  first capital A-D. Its list adds ``Answer:`` and ``Option:`` to the one the first official
  script had; two entries are adjacent literals Python joins (``"The best option isThe correct
  option is"``, ``"Best answer:Best option:"``), which we keep because that is what runs.
- **Official** (``eval_your_results.py`` of ``thanku-all/parse_answer``, the script the Video-MME
  README links): the same rule with ``The correct answer`` and ``The correct option`` appended.

Each reference hard-codes Video-MME's A-D. Every extractor here takes the question's ``letters``
instead (default A-D): a four-option question is read exactly as the reference reads it, and a
question with 2-10 options by the same rule over its own letters (docs/protocols.md, "Other option
counts").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import cache

from skillharness.agent.protocols.names import ProtocolName

__all__ = [
    "LMMS_EVAL_REASONING_TAGS",
    "OFFICIAL_PREFIXES",
    "REFERENCE_EXTRACTORS",
    "VLMEVALKIT_PREFIXES",
    "lmms_eval_letter",
    "official_letter",
    "strip_reasoning",
    "vlmevalkit_letter",
]

# Video-MME's four letters, which every reference script hard-codes. Another option count reads the
# question's own letters instead (docs/protocols.md says what the references do there); a
# four-option question's letters are these, so Video-MME is read exactly as the references read it.
_CHOICES = ("A", "B", "C", "D")


@cache
def _capital(letters: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("[" + "".join(re.escape(letter) for letter in letters) + "]")


VLMEVALKIT_PREFIXES = (
    "The best answer is",
    "The correct answer is",
    "The answer is",
    "The answer",
    "The best option isThe correct option is",  # two literals joined, as in the reference
    "Best answer:Best option:",  # likewise
    "Answer:",
    "Option:",
)
OFFICIAL_PREFIXES = (*VLMEVALKIT_PREFIXES, "The correct answer", "The correct option")

# The lmms-eval command line's default --reasoning_tags, applied before any task scores a reply.
LMMS_EVAL_REASONING_TAGS = (("<think>", "</think>"), ("<analysis>", "</analysis>"))

# Phrases after which any choice letter is a "phrase" candidate, in the reference's order.
_PHRASES = (
    "the answer is",
    "answer is",
    "the correct answer is",
    "correct answer is",
    "the best answer is",
    "best answer is",
    "the correct option is",
    "correct option is",
    "the best option is",
    "best option is",
    "the choice is",
    "choice is",
    "the correct choice is",
    "correct choice is",
    "i choose",
    "i select",
    "i pick",
    "my answer is",
    "my choice is",
    "옵션",
    "정답은",
    "답은",
    "답:",
    "答案是",
    "答案为",
    "选",
    "答えは",
)
# Format -> rank; a higher rank wins, then the later position.
_RANK = {"start": 10, "end": 9, "phrase": 7, "paren": 6, "period": 5, "colon": 4, "right": 3, "space": 2}
_SUFFIXED = (("period", "{}."), ("colon", "{}:"), ("right", "{})"), ("space", "{} "))


def _first_capital(response: str, prefixes: tuple[str, ...], letters: Sequence[str]) -> str:
    text = response.strip()
    for prefix in prefixes:
        text = text.replace(prefix, "")
    found = _capital(tuple(letters)).search(text)
    if found is None:
        return ""  # covers "more than ten words and no capital A-D" as well
    return found.group(0)


def vlmevalkit_letter(response: str, letters: Sequence[str] = _CHOICES) -> str:
    """VLMEvalKit's Video-MME ``extract_characters_regex``, over ``letters`` (the question's)."""
    return _first_capital(response, VLMEVALKIT_PREFIXES, letters)


def official_letter(response: str, letters: Sequence[str] = _CHOICES) -> str:
    """The linked official script's ``extract_characters_regex``, over ``letters`` (the question's)."""
    return _first_capital(response, OFFICIAL_PREFIXES, letters)


def strip_reasoning(text: str, tags: tuple[tuple[str, str], ...] = LMMS_EVAL_REASONING_TAGS) -> str:
    """lmms-eval's reasoning-tag stripping: drop each ``start…end`` block; a reply holding only a
    closing tag keeps what follows the last one (templates that prefill the opening tag)."""
    result = text
    for start_tag, end_tag in tags:
        while start_tag in result and end_tag in result:
            start = result.find(start_tag)
            end = result.find(end_tag, start)
            if end == -1:
                break
            result = result[:start] + result[end + len(end_tag) :]
        if end_tag in result and start_tag not in result:
            result = result.rsplit(end_tag, 1)[-1]
    return result.strip()


def _candidates(text: str, choices: Sequence[str]) -> list[tuple[int, int, str]]:
    """(rank, position, letter) for every format that matches ``text`` (already padded)."""
    found = [(_RANK["paren"], text.rfind(f"({c})"), c) for c in choices if f"({c})" in text]
    for name, shape in _SUFFIXED:
        found += [(_RANK[name], text.rfind(shape.format(c)), c) for c in choices if shape.format(c) in text]
    lower = text.lower()
    for phrase in _PHRASES:
        at = lower.find(phrase)
        if at != -1:
            after = at + len(phrase)
            found += [(_RANK["phrase"], text.find(c, after), c) for c in choices if text.find(c, after) != -1]
    core = text.strip()
    found += [
        (_RANK["start"], 0, c)
        for c in choices
        if core.startswith(c) and (len(core) == 1 or not core[1].isalpha())
    ]
    found += [
        (_RANK["end"], len(text) - 1, c)
        for c in choices
        if core.endswith(c) and (len(core) == 1 or not core[-2].isalpha())
    ]
    return found


def lmms_eval_letter(response: str, letters: Sequence[str] = _CHOICES) -> str:
    """lmms-eval's Video-MME extraction: reasoning tags stripped, then the ranked extractor over
    ``letters`` (the question's; Video-MME's A-D by default)."""
    text = strip_reasoning(response).strip()
    if not text:
        return ""
    for char in ",.!?;:'\"":
        text = text.strip(char)
    padded = f" {text} "
    found = _candidates(padded, letters) or [(0, padded.rfind(c), c) for c in letters if c in padded]
    if not found:
        return ""
    # The reference sorts (rank, position) descending with a stable sort, so on a tie the first
    # candidate found wins; max() also returns the first of equal maxima.
    return max(found, key=lambda item: (item[0], item[1]))[2]


REFERENCE_EXTRACTORS: dict[ProtocolName, Callable[[str, Sequence[str]], str]] = {
    ProtocolName.LMMS_EVAL: lmms_eval_letter,
    ProtocolName.VLMEVALKIT: vlmevalkit_letter,
    ProtocolName.OFFICIAL: official_letter,
}
