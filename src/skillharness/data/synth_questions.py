"""Questions about a synthetic scene, one generator per Video-MME task type.

Each generator reads only the scene (the ground truth), so its answer is what the video shows. It
returns a :class:`Draft` (question, correct option, distractors, the facts it used and where in
the video the evidence is) or ``None`` when the scene cannot support that kind of question.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from skillharness.data.questions import TaskType
from skillharness.data.synth_scene import BACKGROUNDS, COLOURS, MOTIONS, QUADRANTS, SHAPES, WORDS, Scene

__all__ = ["GENERATORS", "QUARTERS", "RELATIONS", "Draft", "motion_text", "summary_text"]

QUARTERS = ("In the first quarter", "In the second quarter", "In the third quarter", "In the last quarter")
RELATIONS = ("To the left of it", "To the right of it", "Above it", "Below it")
_QUADRANT_TEXT = {q: q.replace("-", " ").capitalize() for q in QUADRANTS}
_EDGES = {
    "moves from left to right": "The right edge",
    "moves from right to left": "The left edge",
    "moves upward": "The top edge",
    "moves downward": "The bottom edge",
}
_ORDINALS = ("first", "second", "third")


@dataclass(frozen=True)
class Draft:
    """A question before its options are lettered. ``ordered`` keeps the options in the given order."""

    kind: str
    question: str
    correct: str
    distractors: tuple[str, ...]
    facts: dict[str, Any]
    evidence_s: tuple[float, float]
    ordered: tuple[str, ...] = field(default=())


def motion_text(motion: str) -> str:
    return f"It {motion}."


def counting(scene: Scene, rng: random.Random) -> Draft | None:
    shape = rng.choice(sorted({o.shape for o in scene.objects}))
    matches = [o for o in scene.objects if o.shape == shape]
    n = len(matches)
    others = sorted((k for k in range(0, 7) if k != n), key=lambda k: (abs(k - n), k))[:3]
    span = (min(o.appear_s for o in matches), max(o.vanish_s for o in matches))
    return Draft(
        "count_shape",
        f"How many {_plural(shape)} appear in the video in total?",
        str(n),
        tuple(str(k) for k in others),
        {"shape": shape, "count": n},
        span,
    )


def _plural(noun: str) -> str:
    return noun + ("es" if noun.endswith("s") else "s")


def ocr(scene: Scene, rng: random.Random) -> Draft | None:
    index = rng.randrange(len(scene.captions))
    caption = scene.captions[index]
    if len(scene.captions) == 1:
        question = "Which word is shown at the bottom of the screen?"
    else:
        question = f"Which word is shown {_ORDINALS[index]} at the bottom of the screen?"
    others = [c.word for c in scene.captions if c is not caption]
    unused = [w for w in WORDS if w not in {c.word for c in scene.captions}]
    distractors = (others + rng.sample(unused, 3))[:3]
    facts = {"index": index, "word": caption.word}
    return Draft(
        "caption_word", question, caption.word, tuple(distractors), facts, (caption.start_s, caption.end_s)
    )


def attribute(scene: Scene, rng: random.Random) -> Draft | None:
    shape = rng.choice(sorted({o.shape for o in scene.objects}))
    first = min((o for o in scene.objects if o.shape == shape), key=lambda o: o.appear_s)
    distractors = rng.sample([c for c in COLOURS if c != first.colour], 3)
    return Draft(
        "first_colour",
        f"What colour is the first {shape} that appears in the video?",
        first.colour.capitalize(),
        tuple(c.capitalize() for c in distractors),
        {"shape": shape, "colour": first.colour},
        (first.appear_s, first.vanish_s),
    )


def object_recognition(scene: Scene, rng: random.Random) -> Draft | None:
    present = sorted({o.shape for o in scene.objects})
    shape = rng.choice(present)
    absent = rng.sample([s for s in SHAPES if s not in present], 3)
    first = min((o for o in scene.objects if o.shape == shape), key=lambda o: o.appear_s)
    return Draft(
        "shape_present",
        "Which of these shapes can be seen in the video?",
        f"A {shape}",
        tuple(f"A {s}" for s in absent),
        {"shape": shape},
        (first.appear_s, first.vanish_s),
    )


def action_recognition(scene: Scene, rng: random.Random) -> Draft | None:
    obj = rng.choice(scene.objects)
    distractors = rng.sample([m for m in MOTIONS if m != obj.motion], 3)
    return Draft(
        "motion",
        f"What does the {obj.name} do while it is on screen?",
        motion_text(obj.motion),
        tuple(motion_text(m) for m in distractors),
        {"object": obj.name, "motion": obj.motion},
        (obj.appear_s, obj.vanish_s),
    )


def temporal_perception(scene: Scene, rng: random.Random) -> Draft | None:
    obj = rng.choice(scene.objects)
    quarter = min(int(obj.appear_s // (scene.duration_s / 4)), 3)
    return Draft(
        "appear_quarter",
        f"When does the {obj.name} first appear in the video?",
        QUARTERS[quarter],
        (),
        {"object": obj.name, "appear_s": obj.appear_s, "quarter": quarter},
        (obj.appear_s, obj.appear_s + 1),
        ordered=QUARTERS,
    )


def spatial_perception(scene: Scene, rng: random.Random) -> Draft | None:
    still = [(o, o.quadrant) for o in scene.objects if o.quadrant]
    if not still:
        return None
    obj, quadrant = rng.choice(still)
    return Draft(
        "quadrant",
        f"In which part of the screen is the {obj.name}?",
        _QUADRANT_TEXT[quadrant],
        (),
        {"object": obj.name, "quadrant": quadrant},
        (obj.appear_s, obj.vanish_s),
        ordered=tuple(_QUADRANT_TEXT.values()),
    )


def spatial_reasoning(scene: Scene, rng: random.Random) -> Draft | None:
    pairs = []
    for a, b in itertools.permutations([o for o in scene.objects if o.quadrant], 2):
        together = (max(a.appear_s, b.appear_s), min(a.vanish_s, b.vanish_s))
        same_row = a.start_xy[1] == b.start_xy[1]
        same_column = a.start_xy[0] == b.start_xy[0]
        if together[1] - together[0] >= 1.5 and (same_row or same_column):
            pairs.append((a, b, together))
    if not pairs:
        return None
    a, b, together = rng.choice(pairs)
    if a.start_xy[1] == b.start_xy[1]:
        relation = RELATIONS[0] if a.start_xy[0] < b.start_xy[0] else RELATIONS[1]
    else:
        relation = RELATIONS[2] if a.start_xy[1] < b.start_xy[1] else RELATIONS[3]
    return Draft(
        "relative_position",
        f"While both are on screen, where is the {a.name} relative to the {b.name}?",
        relation,
        (),
        {"a": a.name, "b": b.name, "relation": relation},
        together,
        ordered=RELATIONS,
    )


def temporal_reasoning(scene: Scene, rng: random.Random) -> Draft | None:
    by_time = sorted(scene.objects, key=lambda o: o.appear_s)
    triples = [
        t
        for t in itertools.combinations(by_time, 3)
        if t[1].appear_s - t[0].appear_s >= 1.0 and t[2].appear_s - t[1].appear_s >= 1.0
    ]
    if not triples:
        return None
    triple = rng.choice(triples)
    names = [o.name for o in triple]
    wrong = [list(p) for p in itertools.permutations(names) if list(p) != names]
    shown = rng.sample(names, 3)
    return Draft(
        "appear_order",
        f"In which order do these objects first appear: the {shown[0]}, the {shown[1]} and the {shown[2]}?",
        _order_text(names),
        tuple(_order_text(p) for p in rng.sample(wrong, 3)),
        {"order": names},
        (triple[0].appear_s, triple[2].appear_s + 1),
    )


def _order_text(names: list[str]) -> str:
    return ", then ".join(f"the {n}" for n in names).capitalize() + "."


def action_reasoning(scene: Scene, rng: random.Random) -> Draft | None:
    movers = [o for o in scene.objects if o.motion in _EDGES]
    if not movers:
        return None
    obj = rng.choice(movers)
    return Draft(
        "heading_edge",
        f"If the {obj.name} kept moving as it does in the video, which edge of the screen would it reach?",
        _EDGES[obj.motion],
        (),
        {"object": obj.name, "motion": obj.motion, "edge": _EDGES[obj.motion]},
        (obj.appear_s, obj.vanish_s),
        ordered=tuple(sorted(set(_EDGES.values()))),
    )


def object_reasoning(scene: Scene, rng: random.Random) -> Draft | None:
    options = []
    for caption in scene.captions:
        for obj in scene.objects:
            if min(obj.vanish_s, caption.end_s) - max(obj.appear_s, caption.start_s) >= 1.0:
                options.append((caption, obj))
    if not options:
        return None
    caption, obj = rng.choice(options)
    absent_from_caption = [
        o.name for o in scene.objects if o.vanish_s <= caption.start_s or o.appear_s >= caption.end_s
    ]
    names = {o.name for o in scene.objects}
    invented = [f"{c} {s}" for c in COLOURS for s in SHAPES if f"{c} {s}" not in names]
    distractors = (
        rng.sample(absent_from_caption, min(2, len(absent_from_caption))) + rng.sample(invented, 3)
    )[:3]
    return Draft(
        "seen_with_word",
        f"Which of these objects is on screen at some moment while the word {caption.word} is shown?",
        f"The {obj.name}",
        tuple(f"The {d}" for d in distractors),
        {"word": caption.word, "object": obj.name, "not_during_word": distractors},
        (caption.start_s, caption.end_s),
    )


def synopsis(scene: Scene, rng: random.Random) -> Draft | None:
    n = len(scene.objects)
    backgrounds = [name for _, name in scene.backgrounds]
    words = [c.word for c in scene.captions]
    correct = summary_text(n, backgrounds, words)
    other_bg = rng.choice([b for b in BACKGROUNDS if b not in backgrounds])
    swapped_words = list(words)
    swapped_words[rng.randrange(len(words))] = rng.choice([w for w in WORDS if w not in words])
    variants = [
        summary_text(n + rng.choice((-1, 1)) if n > 1 else n + 1, backgrounds, words),
        summary_text(n, [other_bg, *backgrounds[1:]], words),
        summary_text(n, backgrounds, swapped_words),
    ]
    if len({correct, *variants}) != 4:
        return None
    facts = {"objects": n, "backgrounds": backgrounds, "words": words}
    return Draft(
        "summary",
        "Which description best summarizes the video?",
        correct,
        tuple(variants),
        facts,
        (0.0, scene.duration_s),
    )


def summary_text(n: int, backgrounds: list[str], words: list[str]) -> str:
    ground = f"a {backgrounds[0]} background" + (
        f" that later turns {backgrounds[1]}" if len(backgrounds) > 1 else ""
    )
    shown = words[0] if len(words) == 1 else ", ".join(words[:-1]) + f" and {words[-1]}"
    label = "word" if len(words) == 1 else "words"
    verb = "is" if len(words) == 1 else "are"
    return f"{n} coloured shapes appear on {ground}, and the {label} {shown} {verb} shown at the bottom."


GENERATORS: dict[str, Callable[[Scene, random.Random], Draft | None]] = {
    TaskType.COUNTING_PROBLEM: counting,
    TaskType.OCR_PROBLEMS: ocr,
    TaskType.ATTRIBUTE_PERCEPTION: attribute,
    TaskType.OBJECT_RECOGNITION: object_recognition,
    TaskType.ACTION_RECOGNITION: action_recognition,
    TaskType.TEMPORAL_PERCEPTION: temporal_perception,
    TaskType.SPATIAL_PERCEPTION: spatial_perception,
    TaskType.SPATIAL_REASONING: spatial_reasoning,
    TaskType.TEMPORAL_REASONING: temporal_reasoning,
    TaskType.ACTION_REASONING: action_reasoning,
    TaskType.OBJECT_REASONING: object_reasoning,
    TaskType.INFORMATION_SYNOPSIS: synopsis,
}
