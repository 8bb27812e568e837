"""The marker lines that split a skill document into regions.

A document is ``body`` + MOMENTUM_MARKER line + ``momentum`` + APPENDIX_MARKER line + ``appendix``.
Kept in their own module because the simulator and the prompt templates need them too.
"""

from __future__ import annotations

import re

__all__ = ["APPENDIX_MARKER", "MARKERS", "MARKER_LIKE", "MOMENTUM_MARKER"]

MOMENTUM_MARKER = "<!-- skillharness:momentum -->"
APPENDIX_MARKER = "<!-- skillharness:appendix -->"
MARKERS = (MOMENTUM_MARKER, APPENDIX_MARKER)

# Anything that looks like one of our markers, however spaced or cased: edit text containing it
# is refused, so an edit can never forge or shadow a region boundary.
MARKER_LIKE = re.compile(r"<!--\s*skillharness\s*:", re.IGNORECASE)
