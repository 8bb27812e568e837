"""A request the server refused for what it carried: how a prediction records it and reads it back.

A refusal (HTTP 400, 413, 422 ... of :data:`~skillharness.llm.errors.REQUEST_REFUSALS`) says the
server is set up below the run's requests: a body limit in front of a multimodal server, fewer
images per prompt than ``agent.max_frames``, a ``max_tokens`` over the server's limit. It says
nothing about the answer the bundle would have given, so it is no answer: an ``infra_error`` with
error class ``RequestRefused``, never scored right or wrong. Scoring it wrong would teach the
training loop the server's limit (fetch fewer frames) instead of the task.

The prediction keeps the status, the endpoint and the likely limit at the head of its message, so
every layer above (infer's outcome, training's refusal tally, the report) can count refusals by
cause from the stored rows alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from skillharness.agent.records import Prediction, PredictionStatus

__all__ = ["REQUEST_REFUSED", "Refusal", "refusal_message", "refusal_of"]

# The error class of a prediction whose request the server refused for its content.
REQUEST_REFUSED = "RequestRefused"

_HEAD = re.compile(r"HTTP (\d{3}) from endpoint <(.*?)> \(likely limit: ([a-z_]+)\): ")


@dataclass(frozen=True)
class Refusal:
    """One refused request: the HTTP status, the endpoint's label and the likely limit's key
    (one of :data:`~skillharness.llm.errors.REFUSAL_LIMITS`)."""

    status: int
    endpoint: str
    limit: str

    @property
    def label(self) -> str:
        """``HTTP 413 from gpu-a (body_size)``: how counts by cause are keyed."""
        return f"HTTP {self.status} from {self.endpoint} ({self.limit})"


def refusal_message(exc: BaseException) -> str:
    """The error message of a refused prediction: a parseable head, then the error itself."""
    context = getattr(exc, "context", {})
    head = (
        f"HTTP {context.get('status', 0)} from endpoint <{context.get('endpoint', '?')}> "
        f"(likely limit: {context.get('limit', 'unknown')}): "
    )
    return head + (str(exc) or repr(exc))[:2000]


def refusal_of(prediction: Prediction) -> Refusal | None:
    """The refusal ``prediction`` records, or None when it is not one."""
    if prediction.status is not PredictionStatus.INFRA_ERROR or prediction.error_class != REQUEST_REFUSED:
        return None
    match = _HEAD.match(prediction.error_message or "")
    if match is None:  # written by hand or cut: still a refusal, of unknown cause
        return Refusal(0, "?", "unknown")
    return Refusal(int(match.group(1)), match.group(2), match.group(3))
