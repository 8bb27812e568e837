"""Assembling an OpenAI-style SSE chat stream into one response, and judging its completeness.

A stream is a success only when it ends with ``data: [DONE]`` after a chunk carrying a
``finish_reason`` and held no error frame (audit P1-2). vLLM reports a mid-stream failure as an
error frame followed by ``[DONE]``; llama.cpp as an error frame and no ``[DONE]``: both are
errors. The assembler is pure (no I/O), so every rule is tested on bytes directly.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from skillharness.errors import LLMError
from skillharness.llm.errors import FATAL_STATUSES, fatal, transient
from skillharness.llm.redact import redact
from skillharness.llm.types import ChatResponse, ToolCall, Usage

__all__ = ["DONE", "StreamAssembler"]

DONE = "[DONE]"

_SURROGATE = re.compile(r"[\ud800-\udfff]")


def _joined(parts: list[str]) -> str:
    """``parts`` concatenated, with UTF-16 surrogate halves made whole.

    A server that escapes non-ASCII as ``\\u`` sequences may cut a character outside the BMP between
    two deltas; each half decodes to a lone surrogate, which no UTF-8 encoder accepts (the next
    request, the cache). Halves that meet again become the character; a stray half becomes U+FFFD.
    """
    text = "".join(parts)
    if _SURROGATE.search(text) is None:
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


@dataclass
class _ToolCallParts:
    id: str | None = None
    name: str | None = None
    arguments: list[str] = field(default_factory=list)


class StreamAssembler:
    """Feed it each SSE ``data`` payload in order; then :meth:`finish` returns or raises."""

    def __init__(self, endpoint: str, secrets: tuple[str, ...] = ()) -> None:
        self.endpoint = endpoint
        self.secrets = secrets  # masked in every excerpt before it is cut (see llm.redact)
        self._content: list[str] = []
        self._tools: dict[int, _ToolCallParts] = {}
        self._finish_reason: str | None = None
        self._usage: Usage | None = None
        self._model = ""
        self._error: LLMError | None = None
        self.done = False
        self.chunks = 0

    def feed(self, data: str) -> None:
        """Consume one ``data:`` payload. Raises a transient error on malformed JSON."""
        if self.done:
            return
        if data.strip() == DONE:
            self.done = True
            return
        try:
            chunk = json.loads(data)
        except ValueError as exc:
            raise transient(
                "malformed_chunk", f"malformed JSON chunk {self._excerpt(data, 80)!r}", self.endpoint
            ) from exc
        if not isinstance(chunk, dict):
            raise transient(
                "malformed_chunk", f"chunk is not an object: {self._excerpt(data, 80)!r}", self.endpoint
            )
        self.chunks += 1
        if "error" in chunk:
            self._error = self._error or self._error_frame(chunk["error"])
            return
        try:
            self._feed_chunk(chunk)
        except (TypeError, ValueError, AttributeError, OverflowError, ValidationError) as exc:
            # A chunk of the wrong shape (a list where an object belongs, a non-numeric index):
            # the stream is garbled, which another attempt may not be.
            raise transient(
                "malformed_chunk", f"chunk of unexpected shape {self._excerpt(data, 80)!r}", self.endpoint
            ) from exc

    def _feed_chunk(self, chunk: dict[str, Any]) -> None:
        self._model = str(chunk.get("model") or self._model)
        if isinstance(chunk.get("usage"), dict):
            self._usage = _usage(chunk["usage"]) or self._usage
        for choice in chunk.get("choices") or ():
            if int(choice.get("index") or 0) == 0:
                self._feed_choice(choice)

    def feed_error(self, data: str) -> None:
        """Consume an ``event: error`` frame (its payload may or may not be JSON)."""
        try:
            body = json.loads(data)
        except ValueError:
            body = {"message": data}
        self._error = self._error or self._error_frame(
            body.get("error", body) if isinstance(body, dict) else body
        )

    def _feed_choice(self, choice: dict[str, Any]) -> None:
        delta = choice.get("delta") or {}
        if delta.get("content") is not None:
            self._content.append(_content_text(delta["content"]))
        for position, part in enumerate(delta.get("tool_calls") or ()):
            index = part.get("index")
            slot = self._tools.setdefault(int(index) if index is not None else position, _ToolCallParts())
            slot.id = slot.id or _text(part.get("id"))
            function = part.get("function") or {}
            slot.name = slot.name or _text(function.get("name"))
            if function.get("arguments") is not None:
                slot.arguments.append(_arguments_text(function["arguments"]))
        if choice.get("finish_reason"):
            self._finish_reason = str(choice["finish_reason"])

    def _excerpt(self, text: str, limit: int) -> str:
        return redact(text, self.secrets)[:limit]

    def _error_frame(self, error: Any) -> LLMError:
        body = error if isinstance(error, dict) else {"message": str(error)}
        message = self._excerpt(str(body.get("message") or body), 300)
        code = body.get("code")
        status = code if isinstance(code, int) else None
        if status in FATAL_STATUSES:
            return fatal(
                "error_frame", f"error frame (code {status}): {message}", self.endpoint, status=status
            )
        return transient("error_frame", f"error frame: {message}", self.endpoint, status=status)

    def finish(self) -> ChatResponse:
        """The assembled response, or the error that makes this stream a failure."""
        if self._error is not None:
            raise self._error
        if not self.done:
            raise transient(
                "truncated_stream", f"stream ended without [DONE] after {self.chunks} chunks", self.endpoint
            )
        if self._finish_reason is None:
            raise transient(
                "truncated_stream", "stream ended with [DONE] but no finish_reason", self.endpoint
            )
        calls = []
        for index in sorted(self._tools):
            parts = self._tools[index]
            if not parts.name:
                raise transient("malformed_chunk", f"tool call {index} has no function name", self.endpoint)
            calls.append(
                ToolCall(id=parts.id or f"call_{index}", name=parts.name, arguments=_joined(parts.arguments))
            )
        return ChatResponse(
            content=_joined(self._content) if self._content else None,
            tool_calls=tuple(calls),
            finish_reason=self._finish_reason,
            usage=self._usage or Usage(),
            model=self._model,
            endpoint=self.endpoint,
        )


def _usage(body: dict[str, Any]) -> Usage | None:
    """The token counts, or None when the server's are not counts (negative, fractional, past any
    context): the answer stands, its usage is unknown rather than a crash of the run recording it."""
    try:
        return Usage(
            prompt_tokens=body.get("prompt_tokens") or 0, completion_tokens=body.get("completion_tokens") or 0
        )
    except ValidationError:
        return None


def _content_text(content: Any) -> str:
    """Delta content: a string, or the list of parts some servers send (``[{"type": "text", "text":
    ...}]``), whose text parts are the content. Any other shape is a garbled chunk, never dropped
    silently (it would score as the model's parse error)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(isinstance(p, dict) for p in content):
        return "".join(
            p["text"] for p in content if p.get("type") == "text" and isinstance(p.get("text"), str)
        )
    raise TypeError(f"content of type {type(content).__name__}")


def _arguments_text(arguments: Any) -> str:
    """Tool-call arguments: a JSON string, or the JSON object some servers send in its place."""
    if isinstance(arguments, str):
        return arguments
    if isinstance(arguments, dict):
        return json.dumps(arguments, ensure_ascii=False)
    raise TypeError(f"tool-call arguments of type {type(arguments).__name__}")
