"""The video-QA agent: one question, one sample, a tool-using loop inside one error boundary."""

from skillharness.agent.batch import answer_all
from skillharness.agent.config import AgentConfig
from skillharness.agent.loop import Agent
from skillharness.agent.normalize import Normalized, normalize_answer
from skillharness.agent.ports import BundleView, FrameSource, InvalidatingChatModel, SubtitleSource, TraceSink
from skillharness.agent.protocols import (
    ProtocolName,
    lmms_eval_letter,
    official_letter,
    vlmevalkit_letter,
)
from skillharness.agent.records import Prediction, PredictionStatus, StepRole, TraceStep
from skillharness.agent.video import LocalVideos

__all__ = [
    "Agent",
    "AgentConfig",
    "BundleView",
    "FrameSource",
    "InvalidatingChatModel",
    "LocalVideos",
    "Normalized",
    "Prediction",
    "PredictionStatus",
    "ProtocolName",
    "StepRole",
    "SubtitleSource",
    "TraceSink",
    "TraceStep",
    "answer_all",
    "lmms_eval_letter",
    "normalize_answer",
    "official_letter",
    "vlmevalkit_letter",
]
