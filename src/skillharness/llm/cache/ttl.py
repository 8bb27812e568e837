"""Cache TTL parsing: ``never`` must be spelled out; otherwise a positive duration.

There is no magic value: ``0``, ``0s`` and a bare number are refused, because the predecessor's
``TTL=0`` silently meant "forever" (audit P1-1).
"""

from __future__ import annotations

import re

from skillharness.errors import ConfigError

__all__ = ["NEVER", "parse_ttl"]

NEVER = "never"
_UNIT_S = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
_PART = re.compile(r"(\d+(?:\.\d+)?)([smhdw])")


def parse_ttl(text: str) -> float | None:
    """Seconds an entry lives, or ``None`` for ``never``.

    Accepts ``never`` or one or more ``<number><unit>`` parts (units s, m, h, d, w), e.g. ``7d``
    or ``1h30m``. Raises ConfigError for anything else, including zero.
    """
    value = text.strip().lower()
    if value == NEVER:
        return None
    parts = _PART.findall(value)
    if not parts or "".join(n + u for n, u in parts) != value:
        raise ConfigError(
            f"cache.ttl {text!r} is not 'never' or a duration like '7d', '12h', '1h30m' "
            "(a bare number is refused: write the unit)",
            field="cache.ttl",
        )
    seconds = sum(float(n) * _UNIT_S[u] for n, u in parts)
    if seconds <= 0:
        raise ConfigError(
            f"cache.ttl {text!r} is zero; write 'never' for entries that never expire", field="cache.ttl"
        )
    return seconds
