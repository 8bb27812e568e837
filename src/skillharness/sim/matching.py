"""Finding which loaded question a prompt is about, from its text alone.

The agent's first user message holds the question and its lettered options verbatim, so a
question matches when its normalized text and every normalized option appear in the prompt.
Several matches resolve to the most specific one (longest question text plus options, then
longest question text), then the smallest id — deterministic. Only a question asked about two
videos with identical options stays ambiguous: the simulator's one documented blind spot.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

from skillharness.data.questions import Question
from skillharness.sim.draw import digest
from skillharness.sim.insights import normalize_text

__all__ = ["QuestionIndex"]

_CACHE_SIZE = 4096


class QuestionIndex:
    """Normalized question texts and options, searched by substring, with an LRU of answers."""

    def __init__(self, questions: Sequence[Question]) -> None:
        self._entries = [
            (normalize_text(q.question), tuple(normalize_text(o) for o in q.options), q) for q in questions
        ]
        # Most specific first: the longest question text plus options, so a question whose text
        # or options extend another's ("3" and "3.5" are both whole words of "3.5") wins over
        # it; then the longest question text; then the smallest id.
        self._entries.sort(key=lambda e: (-len(e[0]) - sum(map(len, e[1])), -len(e[0]), e[2].question_id))
        self._cache: OrderedDict[bytes, tuple[Question, ...]] = OrderedDict()

    def find_all(self, text: str) -> tuple[Question, ...]:
        """Every loaded question whose text and options all appear in ``text``, best first."""
        key = digest(text)
        hit = self._cache.get(key)
        if hit is not None:
            self._cache.move_to_end(key)
            return hit
        norm = normalize_text(text)
        found = tuple(
            q for qtext, options, q in self._entries if qtext in norm and all(o in norm for o in options)
        )
        self._cache[key] = found
        if len(self._cache) > _CACHE_SIZE:
            self._cache.popitem(last=False)
        return found

    def find(self, text: str) -> Question | None:
        """The best single match, or None."""
        found = self.find_all(text)
        return found[0] if found else None
