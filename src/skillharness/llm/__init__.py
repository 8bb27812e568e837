"""The LLM layer: streaming client, errors, retries, breaker, routing, accounting and cache.

Higher layers call :func:`build_chat_model` and then ``await model.complete(request)``.
"""

from skillharness.llm.accounting import Accountant, RoleUsage
from skillharness.llm.cache.backend import CacheBackend, redact_url
from skillharness.llm.cache.opener import open_backend
from skillharness.llm.client import count_images, request_body
from skillharness.llm.config import (
    BreakerConfig,
    CacheConfig,
    EndpointConfig,
    LLMConfig,
    RetryConfig,
    TimeoutConfig,
)
from skillharness.llm.errors import REFUSAL_LIMITS, refuses_request
from skillharness.llm.events import AttemptEvent, EventLog, LLMEvent
from skillharness.llm.media import MEDIA_IO_KWARGS, FrameTransport, MediaConfig
from skillharness.llm.probe import ModelListing, probe_models
from skillharness.llm.roles import (
    AGENT_TOOL_NAMES,
    DOCUMENT_CLOSE,
    DOCUMENT_OPEN,
    FRAME_LABEL,
    RANK_CANDIDATE_HEADING,
    RANK_DECLINE_OFFER,
    RANK_NONE,
    SAMPLE_IDX_KEY,
    TOOL_GET_FRAMES,
    TOOL_GET_SUBTITLES,
    TOOL_PARAMETERS,
    TOOL_SUBMIT_ANSWER,
    UNDER_TEST_CLOSE,
    UNDER_TEST_OPEN,
    Role,
    response_format,
    role_of_request,
)
from skillharness.llm.served import Served, ServedVerdict, ask_by_name, probe_config, served_verdict
from skillharness.llm.stack import LLMStack, build_chat_model
from skillharness.llm.toolcall import extract_tool_call
from skillharness.llm.types import (
    PER_DRAW,
    ChatModel,
    ChatRequest,
    ChatResponse,
    SamplingParams,
    ToolCall,
    Usage,
    draw_seed,
)

__all__ = [
    "AGENT_TOOL_NAMES",
    "DOCUMENT_CLOSE",
    "DOCUMENT_OPEN",
    "FRAME_LABEL",
    "MEDIA_IO_KWARGS",
    "PER_DRAW",
    "RANK_CANDIDATE_HEADING",
    "RANK_DECLINE_OFFER",
    "RANK_NONE",
    "REFUSAL_LIMITS",
    "SAMPLE_IDX_KEY",
    "TOOL_GET_FRAMES",
    "TOOL_GET_SUBTITLES",
    "TOOL_PARAMETERS",
    "TOOL_SUBMIT_ANSWER",
    "UNDER_TEST_CLOSE",
    "UNDER_TEST_OPEN",
    "Accountant",
    "AttemptEvent",
    "BreakerConfig",
    "CacheBackend",
    "CacheConfig",
    "ChatModel",
    "ChatRequest",
    "ChatResponse",
    "EndpointConfig",
    "EventLog",
    "FrameTransport",
    "LLMConfig",
    "LLMEvent",
    "LLMStack",
    "MediaConfig",
    "ModelListing",
    "RetryConfig",
    "Role",
    "RoleUsage",
    "SamplingParams",
    "Served",
    "ServedVerdict",
    "TimeoutConfig",
    "ToolCall",
    "Usage",
    "ask_by_name",
    "build_chat_model",
    "count_images",
    "draw_seed",
    "extract_tool_call",
    "open_backend",
    "probe_config",
    "probe_models",
    "redact_url",
    "refuses_request",
    "request_body",
    "response_format",
    "role_of_request",
    "served_verdict",
]
