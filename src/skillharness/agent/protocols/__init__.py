"""Reference protocols: send exactly the request lmms-eval, VLMEvalKit or the official Video-MME
evaluation would send, and read answers the way their scorers do (docs/protocols.md)."""

from skillharness.agent.protocols.extract import (
    REFERENCE_EXTRACTORS,
    lmms_eval_letter,
    official_letter,
    vlmevalkit_letter,
)
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
    "REFERENCE_EXTRACTORS",
    "ProtocolName",
    "ReferenceMedia",
    "ReferenceOptions",
    "ReferenceTurn",
    "build_turn",
    "lmms_eval_letter",
    "official_letter",
    "vlmevalkit_letter",
]
