"""The answer extractors of the reference scorers, as written there.

lmms-eval (``lmms_eval/tasks/videomme/utils.py``) and the official script
(``evaluation/eval_your_results.py``) share ``extract_characters_regex``: strip, delete a list of
answer prefixes, give up on more than ten words without a capital A-D, else return the first
capital A-D anywhere in what is left ("" when there is none). The prefix list in both holds two
adjacent string literals without a comma between them, so Python joins them:
``"The best option isThe correct option is"`` and ``"Best answer:Best option:"``. We keep that,
because it is what those scorers run. They differ only in what they do with "": lmms-eval counts
it wrong (everything stays in the denominator), the official script drops it from the denominator.
"""

from __future__ import annotations

import re

__all__ = ["REFERENCE_PREFIXES", "extract_reference_letter"]

REFERENCE_PREFIXES = (
    "The best answer is",
    "The correct answer is",
    "The answer is",
    "The answer",
    "The best option isThe correct option is",  # two literals joined, as in the reference
    "Best answer:Best option:",
)
_CAPITAL = re.compile(r"[ABCD]")


def extract_reference_letter(response: str) -> str:
    """The letter the lmms-eval / official extractor reads from ``response``, or "" for none."""
    text = response.strip()
    for prefix in REFERENCE_PREFIXES:
        text = text.replace(prefix, "")
    found = _CAPITAL.search(text)
    if len(text.split()) > 10 and found is None:
        return ""
    return found.group(0) if found else ""
