"""Reference protocols: send exactly the request lmms-eval, VLMEvalKit or the official Video-MME
evaluation would send, and read answers the way their scorers do (docs/protocols.md)."""

from skillharness.agent.protocols.extract import REFERENCE_PREFIXES, extract_reference_letter
from skillharness.agent.protocols.turn import (
    REFERENCE_DEFAULTS,
    ProtocolName,
    ReferenceMedia,
    ReferenceOptions,
    ReferenceTurn,
    build_turn,
)

__all__ = [
    "REFERENCE_DEFAULTS",
    "REFERENCE_PREFIXES",
    "ProtocolName",
    "ReferenceMedia",
    "ReferenceOptions",
    "ReferenceTurn",
    "build_turn",
    "extract_reference_letter",
]
