"""The synthetic benchmark's world: what each generated video shows, as plain data.

A scene is the generator's ground truth: every object with its shape, colour, visible interval and
straight-line motion; the words shown in the caption band; the background colour over time. The
renderer draws exactly this, and every question is computed from it.

Layout of a frame (192x144): objects live in the upper 120 px; still objects sit at one of four
quadrant centres; horizontal movers cross the middle row, vertical movers the middle column;
captions are drawn in the bottom band. Movers never overlap each other in time.
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = [
    "BACKGROUNDS",
    "COLOURS",
    "DURATION_RANGES",
    "MOTIONS",
    "QUADRANTS",
    "SHAPES",
    "WORDS",
    "Caption",
    "Scene",
    "SceneObject",
    "make_scene",
]

WIDTH, HEIGHT, FPS = 192, 144, 10
BAND_TOP = 120  # caption band starts here
# Video-MME's duration labels, scaled down: short < 15 s, medium 15-35 s, long > 35 s.
DURATION_RANGES: dict[str, tuple[float, float]] = {
    "short": (8.0, 13.0),
    "medium": (18.0, 32.0),
    "long": (40.0, 56.0),
}
COLOURS: dict[str, tuple[int, int, int]] = {
    "red": (230, 40, 40),
    "green": (40, 200, 60),
    "blue": (50, 90, 240),
    "yellow": (240, 220, 40),
    "white": (245, 245, 245),
    "orange": (245, 140, 20),
    "purple": (160, 60, 210),
}
BACKGROUNDS: dict[str, tuple[int, int, int]] = {
    "black": (10, 10, 10),
    "grey": (90, 90, 90),
    "navy": (15, 25, 80),
    "dark green": (10, 60, 25),
    "brown": (80, 45, 20),
}
SHAPES = ("circle", "square", "triangle", "diamond", "star", "hexagon", "cross")
MOTIONS = (
    "stays still",
    "moves from left to right",
    "moves from right to left",
    "moves upward",
    "moves downward",
)
QUADRANTS: dict[str, tuple[float, float]] = {
    "top-left": (48.0, 30.0),
    "top-right": (144.0, 30.0),
    "bottom-left": (48.0, 90.0),
    "bottom-right": (144.0, 90.0),
}
_PATHS: dict[str, tuple[tuple[float, float], tuple[float, float]]] = {
    "moves from left to right": ((16.0, 60.0), (176.0, 60.0)),
    "moves from right to left": ((176.0, 60.0), (16.0, 60.0)),
    "moves upward": ((96.0, 106.0), (96.0, 14.0)),
    "moves downward": ((96.0, 14.0), (96.0, 106.0)),
}
WORDS = (
    "APPLE",
    "RIVER",
    "TIGER",
    "CLOUD",
    "PIANO",
    "LEMON",
    "ROBOT",
    "MAPLE",
    "OCEAN",
    "CANDY",
    "ZEBRA",
    "QUILT",
)
_MIN_VISIBLE_S = 2.5


@dataclass(frozen=True)
class SceneObject:
    """One shape on screen from ``appear_s`` (inclusive) to ``vanish_s`` (exclusive)."""

    shape: str
    colour: str
    appear_s: float
    vanish_s: float
    motion: str
    start_xy: tuple[float, float]
    end_xy: tuple[float, float]
    quadrant: str | None = None  # for still objects

    @property
    def name(self) -> str:
        return f"{self.colour} {self.shape}"

    def visible(self, t: float) -> bool:
        return self.appear_s <= t < self.vanish_s

    def position(self, t: float) -> tuple[float, float]:
        span = self.vanish_s - self.appear_s
        k = min(max((t - self.appear_s) / span, 0.0), 1.0)
        (x0, y0), (x1, y1) = self.start_xy, self.end_xy
        return x0 + k * (x1 - x0), y0 + k * (y1 - y0)


@dataclass(frozen=True)
class Caption:
    """A word shown in the caption band from ``start_s`` to ``end_s``."""

    word: str
    start_s: float
    end_s: float


@dataclass(frozen=True)
class Scene:
    """Everything one generated video shows."""

    video_id: str
    video_key: str  # the ``videoID`` column: file stem of the mp4 and srt
    duration_label: str
    duration_s: float
    objects: tuple[SceneObject, ...]
    captions: tuple[Caption, ...]
    backgrounds: tuple[tuple[float, str], ...]  # (from_s, colour name), first from 0
    has_subtitles: bool
    fps: int = FPS
    width: int = WIDTH
    height: int = HEIGHT
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def n_frames(self) -> int:
        return round(self.duration_s * self.fps)

    def background_at(self, t: float) -> str:
        return [name for start, name in self.backgrounds if start <= t][-1]

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _quarter_safe(t: float, duration: float, margin: float) -> float:
    """Move ``t`` away from quarter boundaries so "which quarter" has one clear answer."""
    quarter = duration / 4
    index = min(int(t // quarter), 3)
    low, high = index * quarter + margin, (index + 1) * quarter - margin
    return min(max(t, low), high)


def _appear_times(rng: random.Random, n: int, duration: float) -> list[float]:
    """Distinct, well separated appearance times that leave each object >= 2.5 s on screen."""
    usable = duration - _MIN_VISIBLE_S - 0.5
    slot = usable / n
    times = [_quarter_safe(i * slot + rng.uniform(0.15, 0.85) * slot, duration, 0.4) for i in range(n)]
    return [round(t, 1) for t in times]


def _objects(rng: random.Random, duration: float, n: int) -> tuple[SceneObject, ...]:
    shapes = rng.sample(SHAPES, 2 if n <= 3 else 3)
    picks = [*shapes, *(rng.choice(shapes) for _ in range(n - len(shapes)))]
    rng.shuffle(picks)
    appear = _appear_times(rng, n, duration)
    # Objects 0 and 1 are still and share a row (so "left of / right of" has one answer); at least
    # one later object moves.
    movers = set(rng.sample(range(2, n), 1 if n < 5 else rng.choice((1, 2))))
    row = rng.choice(("top", "bottom"))
    pair = [f"{row}-left", f"{row}-right"]
    rng.shuffle(pair)
    prefs = [*pair, *rng.sample([q for q in QUADRANTS if q not in pair], 2)]
    used: set[tuple[str, str]] = set()
    objects: list[SceneObject] = []
    mover_free_at = 0.0
    for i, (shape, t0) in enumerate(zip(picks, appear, strict=True)):
        colour = rng.choice([c for c in COLOURS if (c, shape) not in used])
        if i in movers and t0 >= mover_free_at:  # movers take turns so they never collide
            motion = rng.choice(MOTIONS[1:])
            t1 = round(min(duration, t0 + rng.uniform(_MIN_VISIBLE_S, 7.0)), 1)
            mover_free_at = t1 + 0.2
            start, end = _PATHS[motion]
            objects.append(SceneObject(shape, colour, t0, t1, motion, start, end))
            used.add((colour, shape))
            continue
        t1 = duration if rng.random() < 0.4 else min(duration, t0 + rng.uniform(_MIN_VISIBLE_S, 14.0))
        if i == 0:
            t1 = max(t1, min(duration, appear[1] + 3.0))  # the pair is on screen together
        t1 = round(t1, 1)
        quadrant = _free_quadrant(prefs if i > 1 else [pair[i]], objects, t0, t1)
        if quadrant is None:
            continue  # every quadrant is taken at that time: leave this object out
        xy = QUADRANTS[quadrant]
        objects.append(SceneObject(shape, colour, t0, t1, "stays still", xy, xy, quadrant))
        used.add((colour, shape))
    return tuple(objects)


def _free_quadrant(prefs: list[str], placed: list[SceneObject], t0: float, t1: float) -> str | None:
    busy = {o.quadrant for o in placed if o.quadrant and o.appear_s < t1 and t0 < o.vanish_s}
    return next((q for q in prefs if q not in busy), None)


def _captions(rng: random.Random, duration: float, n: int) -> tuple[Caption, ...]:
    words = rng.sample(WORDS, n)
    slot = duration / n
    out = []
    for i, word in enumerate(words):
        length = rng.uniform(_MIN_VISIBLE_S, max(_MIN_VISIBLE_S, min(6.0, slot - 0.6)))
        start = i * slot + rng.uniform(0.2, max(0.2, slot - length - 0.2))
        out.append(Caption(word, round(start, 1), round(min(start + length, duration), 1)))
    return tuple(out)


def make_scene(rng: random.Random, video_id: str, video_key: str, label: str, subtitles: bool) -> Scene:
    """A random scene for one video of the given duration label."""
    low, high = DURATION_RANGES[label]
    duration = round(rng.uniform(low, high), 1)
    n_objects = {"short": 3, "medium": 4, "long": 5}[label]
    n_captions = {"short": 1, "medium": 2, "long": 3}[label]
    background = rng.sample(list(BACKGROUNDS), 2)
    backgrounds: tuple[tuple[float, str], ...] = ((0.0, background[0]),)
    if label != "short" or rng.random() < 0.5:
        change = _quarter_safe(round(rng.uniform(0.3, 0.7) * duration, 1), duration, 0.4)
        backgrounds = (*backgrounds, (round(change, 1), background[1]))
    return Scene(
        video_id=video_id,
        video_key=video_key,
        duration_label=label,
        duration_s=duration,
        objects=_objects(rng, duration, n_objects),
        captions=_captions(rng, duration, n_captions),
        backgrounds=backgrounds,
        has_subtitles=subtitles,
    )
