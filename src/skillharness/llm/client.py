"""One OpenAI-compatible endpoint over httpx, streaming SSE.

The client makes exactly one attempt per :meth:`EndpointClient.complete`; retries, breaking and
routing are wrappers around it. Every failure leaves here as our error tree (httpx exceptions
are translated at this boundary), and the response is always closed, also on cancellation.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from typing import Any

import httpx
import httpx_sse

from skillharness.errors import AuthError, LLMError
from skillharness.llm.config import EndpointConfig, TimeoutConfig
from skillharness.llm.errors import (
    error_for_status,
    fatal,
    likely_limit,
    map_httpx_error,
    not_event_stream,
    refuses_request,
    transient,
)
from skillharness.llm.lanes import Lanes
from skillharness.llm.media import MEDIA_IO_KWARGS
from skillharness.llm.redact import redact
from skillharness.llm.roles import SAMPLE_IDX_KEY
from skillharness.llm.stream import StreamAssembler
from skillharness.llm.toolcall import apply_content_tool_call
from skillharness.llm.types import ChatRequest, ChatResponse

__all__ = ["EndpointClient", "count_images", "request_body"]

_ERROR_BODY_LIMIT = 2048
_IMAGE_PARTS = frozenset({"image_url", "input_image", "image"})
_VIDEO_PARTS = frozenset({"video_url"})


def _count(messages: tuple[dict[str, Any], ...] | list[dict[str, Any]], kinds: frozenset[str]) -> int:
    return sum(
        1
        for message in messages
        if isinstance(message.get("content"), list)
        for part in message["content"]
        if isinstance(part, dict) and part.get("type") in kinds
    )


def count_images(messages: tuple[dict[str, Any], ...] | list[dict[str, Any]]) -> int:
    """Image parts in ``messages`` (what a server's images-per-prompt limit counts)."""
    return _count(messages, _IMAGE_PARTS)


def _with_shape(exc: LLMError, request: ChatRequest, body_bytes: int) -> LLMError:
    """A refusal, naming what the request carried and the limit it most likely hit.

    The server's message rarely holds the numbers a user compares with its settings (nginx's 413
    page holds none), so the error carries them: body bytes, images and max_tokens.
    """
    if not refuses_request(exc):
        return exc
    images = count_images(request.messages)
    videos = _count(request.messages, _VIDEO_PARTS)  # a server counts them apart from images
    max_tokens = request.sampling.max_tokens
    limit = likely_limit(int(exc.context["status"]), exc.message)
    exc.context = {
        **exc.context,
        "body_bytes": body_bytes,
        "images": images,
        "videos": videos,
        "max_tokens": max_tokens,
        "limit": limit,
    }
    shown = f"{images} image(s)" + (f", {videos} video(s)" if videos else "")
    exc.message += (
        f" [the request: {body_bytes} bytes, {shown}, max_tokens {max_tokens}; likely limit: {limit}]"
    )
    exc.args = (exc.message,)
    return exc


def request_body(request: ChatRequest, *, send_sample_idx: bool = True) -> dict[str, Any]:
    """The JSON body sent for ``request`` (streaming, with usage in the final chunk)."""
    body: dict[str, Any] = {"model": request.model, "messages": list(request.messages)}
    if request.tools is not None:
        body["tools"] = list(request.tools)
    if request.tool_choice is not None:
        body["tool_choice"] = request.tool_choice
    if request.response_format is not None:
        body["response_format"] = request.response_format
    body.update(request.sampling.model_dump(mode="json", exclude_none=True))
    if send_sample_idx and request.sample_idx > 0:
        body[SAMPLE_IDX_KEY] = request.sample_idx  # the convention of skillharness.llm.roles
    if request.media_io_kwargs is not None:
        body[MEDIA_IO_KWARGS] = request.media_io_kwargs
    if request.extra_body:
        body.update(request.extra_body)
    body["stream"] = True
    body["stream_options"] = {"include_usage": True}
    return body


class EndpointClient:
    """A :class:`ChatModel` for one endpoint: one streamed attempt per call."""

    def __init__(
        self, endpoint: EndpointConfig, timeouts: TimeoutConfig, *, tool_calls_in_content: bool = False
    ) -> None:
        self.endpoint = endpoint
        self.label = endpoint.label
        self.total_s = timeouts.total_s
        self.tool_calls_in_content = tool_calls_in_content
        self._url = endpoint.base_url.rstrip("/") + "/chat/completions"
        # Room for every in-flight call plus a few spares; the router enforces the limit.
        self._lanes = Lanes(self._url, timeouts, endpoint.max_in_flight + 4)

    def _headers(self) -> dict[str, str]:
        env = self.endpoint.api_key_env
        if env is None:
            return {}
        key = os.environ.get(env)  # read per call so a rotated key is picked up; never stored
        if not key:
            raise AuthError(
                f"{self.label}: env var {env} (endpoints[].api_key_env) is not set or empty",
                kind="missing_key",
                endpoint=self.label,
                env_var=env,
            )
        return {"Authorization": f"Bearer {key}"}

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """One attempt; raises TransientLLMError / FatalLLMError / AuthError on failure."""
        started = time.perf_counter()
        try:
            async with asyncio.timeout(self.total_s):
                response = await self._stream(request)
        except TimeoutError as exc:
            raise transient(
                "deadline", f"attempt exceeded its total deadline of {self.total_s}s", self.label
            ) from exc
        except LLMError:
            raise
        except (httpx.HTTPError, httpx.InvalidURL, httpx.CookieConflict, httpx.StreamError) as exc:
            raise map_httpx_error(exc, self.label) from exc
        if self.tool_calls_in_content:
            response = apply_content_tool_call(response, request.tools)
        return response.model_copy(update={"latency_s": time.perf_counter() - started})

    def _encoded_body(self, request: ChatRequest) -> bytes:
        body = request_body(request, send_sample_idx=self.endpoint.send_sample_idx)
        try:
            text = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
            return text.encode("utf-8")
        except (ValueError, TypeError) as exc:  # NaN, a lone surrogate, a non-JSON object
            raise fatal("invalid_request", f"request body is not valid JSON: {exc}", self.label) from exc

    async def _stream(self, request: ChatRequest) -> ChatResponse:
        try:
            return await self._read_stream(request)
        except LLMError as exc:
            raise self._without_key(exc) from exc.__cause__

    def _key(self) -> str | None:
        return os.environ.get(self.endpoint.api_key_env) if self.endpoint.api_key_env else None

    def _secrets(self) -> tuple[str, ...]:
        key = self._key()
        return (key,) if key else ()

    def _without_key(self, exc: LLMError) -> LLMError:
        """The error with any echo of the API key masked (error frames quote what the server says).

        The excerpts were masked before they were cut (error_for_status, StreamAssembler); this
        last pass covers every other message, and any Bearer token a server quoted.
        """
        secrets = self._secrets()
        exc.message = redact(exc.message, secrets)
        exc.args = (exc.message,)
        exc.context = {k: redact(v, secrets) if isinstance(v, str) else v for k, v in exc.context.items()}
        return exc

    async def _read_stream(self, request: ChatRequest) -> ChatResponse:
        assembler = StreamAssembler(self.label, self._secrets())
        content = self._encoded_body(request)
        async with (
            self._lanes.lane() as http,
            httpx_sse.aconnect_sse(
                http,
                "POST",
                self._url,
                content=content,
                headers={"Content-Type": "application/json", **self._headers()},
            ) as source,
        ):
            response = source.response
            if response.status_code != 200:
                raise _with_shape(await self._status_error(response), request, len(content))
            content_type = response.headers.get("content-type", "")
            if "text/event-stream" not in content_type.lower():
                raise not_event_stream(
                    200, content_type, await self._body_excerpt(response), self.label, secrets=self._secrets()
                )
            async for event in source.aiter_sse():
                if not event.data and event.event != "error":
                    # The SSE spec dispatches no event whose data buffer is empty (a keep-alive
                    # "event: ping", a blank line after an "id:"); httpx-sse yields them anyway.
                    continue
                if event.event == "error":  # some servers name the frame instead of an "error" key
                    assembler.feed_error(event.data)
                    continue
                # Read on past [DONE] to the end of the body: a fully read response returns its
                # connection to the pool, where breaking off would close it (a new TCP connect per call).
                assembler.feed(event.data)
        return assembler.finish()

    async def _status_error(self, response: httpx.Response) -> LLMError:
        return error_for_status(
            response.status_code,
            await self._body_excerpt(response),
            self.label,
            retry_after=response.headers.get("retry-after"),
            api_key_env=self.endpoint.api_key_env,
            secrets=self._secrets(),
        )

    async def _body_excerpt(self, response: httpx.Response) -> str:
        """The first part of a body that is not a stream, with the API key masked."""
        raw = b""
        async for part in response.aiter_bytes():
            raw += part
            if len(raw) >= _ERROR_BODY_LIMIT:
                break
        # Masked before anything is cut: the read limit may fall inside an echoed key, whose
        # unread rest leaves a short prefix at the very end (cut=True masks that one too).
        return redact(
            raw[:_ERROR_BODY_LIMIT].decode("utf-8", "replace"),
            self._secrets(),
            cut=len(raw) >= _ERROR_BODY_LIMIT,
        )

    async def aclose(self) -> None:
        """Close every connection."""
        await self._lanes.aclose()
