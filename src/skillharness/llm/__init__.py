"""The LLM layer: streaming client, errors, retries, breaker, routing, accounting and cache.

Higher layers call :func:`build_chat_model` and then ``await model.complete(request)``.
"""

from skillharness.llm.accounting import Accountant, RoleUsage
from skillharness.llm.config import BreakerConfig, CacheConfig, EndpointConfig, LLMConfig, RetryConfig
from skillharness.llm.stack import LLMStack, build_chat_model
from skillharness.llm.toolcall import extract_tool_call
from skillharness.llm.types import ChatModel, ChatRequest, ChatResponse, SamplingParams, ToolCall, Usage

__all__ = [
    "Accountant",
    "BreakerConfig",
    "CacheConfig",
    "ChatModel",
    "ChatRequest",
    "ChatResponse",
    "EndpointConfig",
    "LLMConfig",
    "LLMStack",
    "RetryConfig",
    "RoleUsage",
    "SamplingParams",
    "ToolCall",
    "Usage",
    "build_chat_model",
    "extract_tool_call",
]
