"""Reading and validating a chat-completions request body (the 4xx side of the server)."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from skillharness.sim.wire import error_body

__all__ = ["HTTPProblem", "parse_chat_request", "read_body"]

Receive = Callable[[], Awaitable[dict[str, Any]]]


@dataclass
class HTTPProblem(Exception):
    """A request the server refuses, with the OpenAI-style body it answers with."""

    status: int
    body: dict[str, Any]


def _invalid(message: str, param: str | None = None, code: str = "invalid_request") -> HTTPProblem:
    return HTTPProblem(400, error_body(message, "invalid_request_error", code, param))


async def read_body(receive: Receive, headers: list[tuple[bytes, bytes]], limit: int) -> bytes:
    """The whole request body, or 413 as soon as it is known to exceed ``limit`` bytes."""
    too_large = HTTPProblem(
        413, error_body(f"request body exceeds {limit} bytes", "invalid_request_error", "request_too_large")
    )
    for name, value in headers:
        if name.lower() == b"content-length" and value.isdigit() and int(value) > limit:
            raise too_large
    parts: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise HTTPProblem(400, error_body("client disconnected", "invalid_request_error", None))
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise too_large
        parts.append(chunk)
        if not message.get("more_body", False):
            return b"".join(parts)


def _check_messages(messages: Any) -> None:
    if not isinstance(messages, list) or not messages:
        raise _invalid("'messages' must be a non-empty array", "messages")
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise _invalid(f"messages[{index}] must be an object with a string 'role'", f"messages[{index}]")
        if message["role"] not in {"system", "user", "assistant", "tool", "developer"}:
            raise _invalid(f"messages[{index}].role {message['role']!r} is not a chat role", "role")
        content = message.get("content")
        if not (content is None or isinstance(content, str) or _objects(content)):
            raise _invalid(
                f"messages[{index}].content must be a string or an array of parts", f"messages[{index}]"
            )
        if message.get("tool_calls") is not None and not _objects(message["tool_calls"]):
            raise _invalid(f"messages[{index}].tool_calls must be an array of objects", f"messages[{index}]")


def _objects(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, dict) for item in value)


def _check_tools(body: dict[str, Any]) -> None:
    """The shapes the roles read: tools, tool_choice, response_format, stream_options."""
    tools = body.get("tools")
    if tools is not None and (
        not _objects(tools)
        or not all(
            isinstance(t.get("function"), dict) and isinstance(t["function"].get("name"), str) for t in tools
        )
    ):
        raise _invalid("'tools' must be an array of {'type': 'function', 'function': {'name': ...}}", "tools")
    choice = body.get("tool_choice")
    if not (
        choice is None
        or choice in ("none", "auto", "required")
        or (isinstance(choice, dict) and isinstance(choice.get("function"), dict))
    ):
        raise _invalid(
            "'tool_choice' must be none, auto, required or {'function': {'name': ...}}", "tool_choice"
        )
    fmt = body.get("response_format")
    if fmt is not None and not isinstance(fmt, dict):
        raise _invalid("'response_format' must be an object", "response_format")
    if fmt and fmt.get("type") == "json_schema" and not isinstance(fmt.get("json_schema"), dict):
        raise _invalid("'response_format.json_schema' must be an object", "response_format")
    if not isinstance(body.get("stream_options", {}), dict | None):
        raise _invalid("'stream_options' must be an object", "stream_options")


def _check_optional_fields(body: dict[str, Any]) -> None:
    if "stream" in body and not isinstance(body["stream"], bool):
        raise _invalid("'stream' must be a boolean", "stream")
    temperature = body.get("temperature")
    if temperature is not None and (
        isinstance(temperature, bool) or not isinstance(temperature, int | float)
    ):
        raise _invalid("'temperature' must be a number", "temperature")
    if temperature is not None and not 0 <= temperature <= 2:
        raise _invalid("'temperature' must be within [0, 2]", "temperature")
    if body.get("n") not in (None, 1):
        raise _invalid("only n=1 is supported", "n")
    _check_tools(body)
    sample_idx = body.get("sample_idx")
    if sample_idx is not None and (isinstance(sample_idx, bool) or not isinstance(sample_idx, int)):
        raise _invalid("'sample_idx' must be an integer", "sample_idx")


def parse_chat_request(raw: bytes, model_names: tuple[str, ...]) -> dict[str, Any]:
    """The validated request object; raises :class:`HTTPProblem` (400/404) otherwise."""
    try:
        body = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _invalid(f"request body is not valid JSON: {exc}") from exc
    if not isinstance(body, dict):
        raise _invalid("request body must be a JSON object")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise _invalid("'model' is required and must be a string", "model")
    _check_messages(body.get("messages"))
    _check_optional_fields(body)
    if model not in model_names:
        raise HTTPProblem(
            404,
            error_body(
                f"The model '{model}' does not exist. Served: {', '.join(model_names)}",
                "invalid_request_error",
                "model_not_found",
                "model",
            ),
        )
    return body
