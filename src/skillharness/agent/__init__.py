"""The video-QA agent: one question, one sample, a tool-using loop inside one error boundary."""

from skillharness.agent.batch import answer_all
from skillharness.agent.config import AgentConfig
from skillharness.agent.largest import largest_request
from skillharness.agent.loop import Agent
from skillharness.agent.normalize import Normalized, normalize_answer
from skillharness.agent.ports import BundleView, FrameSource, InvalidatingChatModel, SubtitleSource, TraceSink
from skillharness.agent.protocols import (
    LmmsEvalTask,
    ProtocolName,
    lmms_eval_letter,
    lmms_eval_task,
    official_letter,
    vlmevalkit_letter,
)
from skillharness.agent.protocols.slots import BundleSlot, check_bundle_slot
from skillharness.agent.records import Prediction, PredictionStatus, StepRole, TraceStep
from skillharness.agent.refusal import Refusal, refusal_of
from skillharness.agent.transport import check_questions
from skillharness.agent.video import LocalVideos, question_window

__all__ = [
    "Agent",
    "AgentConfig",
    "BundleSlot",
    "BundleView",
    "FrameSource",
    "InvalidatingChatModel",
    "LmmsEvalTask",
    "LocalVideos",
    "Normalized",
    "Prediction",
    "PredictionStatus",
    "ProtocolName",
    "Refusal",
    "StepRole",
    "SubtitleSource",
    "TraceSink",
    "TraceStep",
    "answer_all",
    "check_bundle_slot",
    "check_questions",
    "largest_request",
    "lmms_eval_letter",
    "lmms_eval_task",
    "normalize_answer",
    "official_letter",
    "question_window",
    "refusal_of",
    "vlmevalkit_letter",
]
