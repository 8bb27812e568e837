"""Deterministic randomness: every draw is a hash of what it depends on.

Hashing instead of a shared ``random.Random`` makes each draw independent of request order and
concurrency, so a test (or a resumed run) gets the same answer for the same input however the
requests interleave.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from typing import TypeVar

__all__ = ["digest", "rng_for", "uniform", "weighted_choice"]

T = TypeVar("T")


def digest(*parts: object) -> bytes:
    """A 16-byte digest of ``parts`` (their ``repr`` joined; order matters)."""
    text = "\x1f".join(repr(part) for part in parts)
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest()


def uniform(*parts: object) -> float:
    """A number in [0, 1) determined by ``parts``."""
    return int.from_bytes(digest(*parts)[:8], "big") / 2**64


def rng_for(*parts: object) -> random.Random:
    """A ``random.Random`` seeded by ``parts``, for draws that need several numbers."""
    return random.Random(int.from_bytes(digest(*parts), "big"))


def weighted_choice(items: Sequence[tuple[T, float]], u: float) -> T:
    """Pick from ``(item, weight)`` pairs with a given uniform ``u`` in [0, 1)."""
    total = sum(weight for _, weight in items)
    point = u * total
    for item, weight in items:
        if point < weight:
            return item
        point -= weight
    return items[-1][0]
