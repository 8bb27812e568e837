"""Reference protocols: send exactly the request lmms-eval, VLMEvalKit or the official Video-MME
evaluation would send, and read answers the way their scorers do (docs/protocols.md); under
lmms-eval, a benchmark with a task of its own there is asked and read as that task does."""

from skillharness.agent.protocols.extract import (
    REFERENCE_EXTRACTORS,
    lmms_eval_letter,
    official_letter,
    vlmevalkit_letter,
)
from skillharness.agent.protocols.task_extract import TASK_EXTRACTORS
from skillharness.agent.protocols.tasks import LmmsEvalTask, lmms_eval_task
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
    "TASK_EXTRACTORS",
    "LmmsEvalTask",
    "ProtocolName",
    "ReferenceMedia",
    "ReferenceOptions",
    "ReferenceTurn",
    "build_turn",
    "lmms_eval_letter",
    "lmms_eval_task",
    "official_letter",
    "vlmevalkit_letter",
]
