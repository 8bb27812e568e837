"""The public surface of the LLM layer is small and deliberate."""

from __future__ import annotations

import skillharness.llm as llm
from skillharness.llm.types import ChatModel


def test_public_surface_is_pinned() -> None:
    assert llm.__all__ == sorted(llm.__all__, key=lambda name: (not name.isupper(), name))
    assert set(llm.__all__) == {
        "AGENT_TOOL_NAMES",
        "DOCUMENT_CLOSE",
        "DOCUMENT_OPEN",
        "FRAME_LABEL",
        "MEDIA_IO_KWARGS",
        "UNDER_TEST_CLOSE",
        "UNDER_TEST_OPEN",
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
        "CacheBackend",
        "Role",
        "TimeoutConfig",
        "open_backend",
        "probe_models",
        "redact_url",
        "refuses_request",
        "request_body",
        "count_images",
        "draw_seed",
        "response_format",
        "role_of_request",
        "Accountant",
        "AttemptEvent",
        "EventLog",
        "LLMEvent",
        "BreakerConfig",
        "CacheConfig",
        "ChatModel",
        "ChatRequest",
        "ChatResponse",
        "EndpointConfig",
        "FrameTransport",
        "MediaConfig",
        "LLMConfig",
        "LLMStack",
        "ModelListing",
        "Served",
        "ServedVerdict",
        "ask_by_name",
        "probe_config",
        "served_verdict",
        "RetryConfig",
        "RoleUsage",
        "SamplingParams",
        "ToolCall",
        "Usage",
        "build_chat_model",
        "extract_tool_call",
    }


def test_stack_satisfies_chat_model() -> None:
    stack = llm.build_chat_model(llm.LLMConfig())
    model: ChatModel = stack  # the protocol is structural; this line type-checks
    assert callable(model.complete)
