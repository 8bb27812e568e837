"""How many options a synthetic question has, and the extra ones a wider layout needs.

The scene generators write four options (Video-MME's count). A layout with more (EgoSchema's
five, Video-MME-v2's eight) gets further wrong options drawn from what the scene does *not*
show, by the question's kind: counts it does not have, words it never displays, shapes that never
appear, orders the objects do not come in. A layout with fewer keeps the right option and the
first wrong ones. The draw has its own random stream per question, so the four-option benchmark
is byte for byte what it was, and a wider one is the same questions with more choices.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from skillharness.data.questions import OPTION_LETTERS
from skillharness.data.synth_questions import Draft, motion_text, summary_text
from skillharness.data.synth_scene import COLOURS, MOTIONS, SHAPES, WORDS, Scene

__all__ = ["VIDEO_MME_SHAPE", "SynthShape", "widen_options"]

# Wrong for every kind of question here, and still read as an answer: what a wider option list
# falls back on when the scene offers no more plausible wrong ones (an ordered set of four).
_FILLERS = (
    "None of the above",
    "It cannot be told from the video",
    "It is never on screen",
    "All of the above",
    "Something not shown in the video",
    "Nothing happens",
)

Lettered = tuple[Draft, list[str], str]


@dataclass(frozen=True)
class SynthShape:
    """The synthetic benchmark's shape in one layout: questions per video, options per question,
    and which videos sit inside a longer file (``pad_s`` of filler before and after; their
    questions carry the clip window of the scene)."""

    per_video: int = 3
    options: int = 4
    pad_s: float = 0.0
    pad_every: int = 2  # every second video (the odd ones) is padded when pad_s > 0

    def padded(self, index: int) -> bool:
        return self.pad_s > 0 and index % self.pad_every == 1


VIDEO_MME_SHAPE = SynthShape()


def widen_options(scene: Scene, seed: int, index: int, k: int, item: Lettered, shape: SynthShape) -> Lettered:
    """``item`` (a draft, its lettered options, its answer letter) with ``shape.options`` options."""
    draft, lettered, answer = item
    if len(lettered) == shape.options:
        return item
    texts = [option.partition(". ")[2] for option in lettered]
    correct = texts[OPTION_LETTERS.index(answer)]
    rng = random.Random(f"skillharness-synth-options:{seed}:{index}:{k}:{shape.options}")
    if shape.options < len(texts):
        wrong = [t for t in texts if t != correct][: shape.options - 1]
        texts = [t for t in texts if t == correct or t in wrong]
    else:
        extra = _extra(draft, scene, texts, shape.options - len(texts), rng)
        for text in extra:
            # An ordered set (quarters, quadrants) keeps its order; the extras follow it.
            texts.insert(len(texts) if draft.ordered else rng.randrange(len(texts) + 1), text)
    letters = OPTION_LETTERS[: len(texts)]
    return draft, [f"{letters[i]}. {t}" for i, t in enumerate(texts)], letters[texts.index(correct)]


def _extra(draft: Draft, scene: Scene, taken: list[str], n: int, rng: random.Random) -> list[str]:
    pool = [t for t in dict.fromkeys(_POOLS.get(draft.kind, _none)(draft, scene)) if t not in taken]
    chosen = rng.sample(pool, min(n, len(pool)))
    fillers = [t for t in _FILLERS if t not in taken and t not in chosen]
    return chosen + fillers[: n - len(chosen)]


def _none(draft: Draft, scene: Scene) -> list[str]:
    return []


def _counts(draft: Draft, scene: Scene) -> list[str]:
    n = int(draft.facts["count"])
    return [str(k) for k in sorted(range(0, 13), key=lambda k: (abs(k - n), k)) if k != n][:8]


def _words(draft: Draft, scene: Scene) -> list[str]:
    shown = {c.word for c in scene.captions}
    return [w for w in WORDS if w not in shown]


def _colours(draft: Draft, scene: Scene) -> list[str]:
    return [c.capitalize() for c in COLOURS if c != draft.facts["colour"]]


def _absent_shapes(draft: Draft, scene: Scene) -> list[str]:
    present = {o.shape for o in scene.objects}
    return [f"A {s}" for s in SHAPES if s not in present]


def _motions(draft: Draft, scene: Scene) -> list[str]:
    return [motion_text(m) for m in MOTIONS if m != draft.facts["motion"]]


def _orders(draft: Draft, scene: Scene) -> list[str]:
    names = list(draft.facts["order"])
    return [
        ", then ".join(f"the {n}" for n in p).capitalize() + "."
        for p in itertools.permutations(names)
        if list(p) != names
    ]


def _absent_objects(draft: Draft, scene: Scene) -> list[str]:
    names = {o.name for o in scene.objects}
    return [f"The {c} {s}" for c in COLOURS for s in SHAPES if f"{c} {s}" not in names]


def _summaries(draft: Draft, scene: Scene) -> list[str]:
    facts: dict[str, Any] = draft.facts
    n, backgrounds, words = facts["objects"], list(facts["backgrounds"]), list(facts["words"])
    return [summary_text(n + d, backgrounds, words) for d in (2, 3, -2, 4) if n + d > 0]


_POOLS: dict[str, Callable[[Draft, Scene], list[str]]] = {
    "count_shape": _counts,
    "caption_word": _words,
    "first_colour": _colours,
    "shape_present": _absent_shapes,
    "motion": _motions,
    "appear_order": _orders,
    "seen_with_word": _absent_objects,
    "summary": _summaries,
}
