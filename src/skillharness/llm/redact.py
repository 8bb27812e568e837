"""Masking secrets in text a server sent back, before any of it is cut, logged or stored.

A hostile or careless endpoint may echo our ``Authorization`` header in an error body, in any
order among other headers, in JSON, plain text or an SSE error frame. Masking only the whole key
is not enough: an excerpt cut inside the key would leave its prefix. So every caller masks the
full text first and truncates afterwards, and :func:`redact` also masks:

- any run of at least :data:`MIN_PREFIX` characters that is a prefix of a secret,
- any ``Bearer <token>`` (whatever the token is: it may be another client's key),
- with ``cut=True`` (the text was cut by a reader), a tail that is a prefix of a secret of any
  length, because the rest of the key was simply not read.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["MASK", "MIN_PREFIX", "redact"]

MASK = "***"
MIN_PREFIX = 6

# "Bearer" then a token of the RFC 6750 alphabet; the scheme name is case-insensitive.
_BEARER = re.compile(r"(?i)\b(bearer)(\s+)[A-Za-z0-9\-._~+/]+=*")


def _mask_prefixes(text: str, secret: str, *, cut: bool) -> str:
    """``text`` with every occurrence of a >= MIN_PREFIX-long prefix of ``secret`` masked."""
    head = secret[: min(MIN_PREFIX, len(secret))]
    out: list[str] = []
    i = 0
    while True:
        j = text.find(head, i)
        if j < 0:
            break
        end = j + len(head)
        while end < len(text) and end - j < len(secret) and text[end] == secret[end - j]:
            end += 1
        out.append(text[i:j])
        out.append(MASK)
        i = end
    out.append(text[i:])
    masked = "".join(out)
    if cut:
        # The reader stopped inside the key: mask the shorter prefix it left at the very end.
        for size in range(min(len(secret), MIN_PREFIX) - 1, 0, -1):
            if masked.endswith(secret[:size]):
                return masked[:-size] + MASK
    return masked


def redact(text: str, secrets: Iterable[str | None], *, cut: bool = False) -> str:
    """``text`` with every echo (whole or partial) of ``secrets`` and every Bearer token masked."""
    known = sorted({s for s in secrets if s}, key=len, reverse=True)
    for secret in known:
        text = _mask_prefixes(text, secret, cut=cut)
    return _BEARER.sub(lambda m: f"{m.group(1)}{m.group(2)}{MASK}", text)
