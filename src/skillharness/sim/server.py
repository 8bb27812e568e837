"""The simulated model's ASGI app (starlette): chat completions, models, stats, faults, oracle.

The chat-completions route is a raw ASGI callable rather than a starlette endpoint because
faults need byte-level control of the response: a stream that ends without ``[DONE]``, a body cut
off by a dropped connection, a malformed frame.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from skillharness.llm.roles import Role, role_of_request
from skillharness.sim.admin import admin_routes
from skillharness.sim.config import FaultKind
from skillharness.sim.draw import uniform
from skillharness.sim.faults import GATEWAY_PAGES, GatewayPage, limit_refusal, unparseable
from skillharness.sim.media import seen_request
from skillharness.sim.requests import HTTPProblem, parse_chat_request, read_body
from skillharness.sim.state import SimState
from skillharness.sim.streaming import send_reply
from skillharness.sim.wire import error_body

__all__ = ["ConnectionDropped", "create_app", "quiet_dropped_connections"]

Send = Callable[[dict[str, Any]], Awaitable[None]]
_HTTP_FAULTS = {
    FaultKind.HTTP_429: 429,
    FaultKind.HTTP_500: 500,
    FaultKind.HTTP_502: 502,
    FaultKind.HTTP_503: 503,
}
_ECHO_FAULTS = {FaultKind.HTTP_401: 401, FaultKind.ECHO_HEADERS: 500}
log = logging.getLogger(__name__)


class ConnectionDropped(Exception):
    """Raised inside the app to make uvicorn drop the connection mid-response (a fault)."""


class _DropFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.exc_info and isinstance(record.exc_info[1], ConnectionDropped))


def quiet_dropped_connections() -> None:
    """Keep uvicorn from logging a traceback for each deliberately dropped connection."""
    logger = logging.getLogger("uvicorn.error")
    if not any(isinstance(f, _DropFilter) for f in logger.filters):
        logger.addFilter(_DropFilter())


async def _send_json(
    send: Send, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None
) -> None:
    data = json.dumps(payload).encode("utf-8")
    raw_headers = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]
    raw_headers += [(k.encode(), v.encode()) for k, v in (headers or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": raw_headers})
    await send({"type": "http.response.body", "body": data})


async def _send_page(send: Send, page: GatewayPage) -> None:
    length = str(len(page.body)).encode()
    headers = [(b"content-type", page.content_type.encode()), (b"content-length", length)]
    await send({"type": "http.response.start", "status": page.status, "headers": headers})
    await send({"type": "http.response.body", "body": page.body})


async def _send_echo(send: Send, fault: FaultKind, headers: list[tuple[bytes, bytes]], pad: int) -> None:
    """A hostile error body quoting the request's headers (the Authorization one included)."""
    echoed = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in headers]
    if fault is FaultKind.HTTP_401:
        echoed = [(k, v) for k, v in echoed if k.lower() == "authorization"] or [("authorization", "")]
    quoted = "; ".join(f"{k}: {v}" for k, v in echoed)
    message = "x" * pad + f" rejected request with headers {quoted}"
    status = _ECHO_FAULTS[fault]
    kind = "invalid_api_key" if status == 401 else "server_error"
    await _send_json(send, status, error_body(message, kind, status))


class ChatCompletions:
    """``POST /v1/chat/completions`` as a raw ASGI app."""

    def __init__(self, state: SimState) -> None:
        self.state = state

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Send) -> None:
        state = self.state
        state.stats.count("requests")
        try:
            if scope["method"] != "POST":
                raise HTTPProblem(405, error_body("use POST", "invalid_request_error", "method_not_allowed"))
            raw = await read_body(receive, scope["headers"], state.config.max_body_bytes)
            body = parse_chat_request(raw, state.config.model_names)
            seen = seen_request(body)  # video parts checked, and shown to the roles as images
        except HTTPProblem as problem:
            state.stats.status(problem.status)
            await _send_json(send, problem.status, problem.body)
            return
        if state.config.record_requests:
            state.recorded.append(body)
        role = role_of_request(body)
        state.stats.role(role.value if role else "none")
        refusal = limit_refusal(len(raw), body, role, state.faults.config)
        if refusal is not None:  # a server limit answers before any fault is drawn
            state.stats.fault(f"refused_{refusal.status}")
            state.stats.status(refusal.status)
            await _send_page(send, refusal)
            return
        unknown = state.responder.refusal(seen, role)
        if unknown is not None:  # before any fault: a forced fault is meant for a request it answers
            state.stats.status(unknown.status)
            await _send_json(send, unknown.status, unknown.body)
            return
        request_no = state.next_request_no()
        fault = state.faults.decide(request_no, role)
        if fault is not None:
            state.stats.fault(fault.value)
        if fault in _ECHO_FAULTS:
            await _send_echo(send, fault, scope["headers"], state.faults.config.echo_pad_chars)
            state.stats.status(_ECHO_FAULTS[fault])
            return
        if fault in GATEWAY_PAGES:  # the gateway answers in the model server's place, at once
            state.stats.status(GATEWAY_PAGES[fault].status)
            await _send_page(send, GATEWAY_PAGES[fault])
            return
        await self._queued(seen, role, request_no, fault, send)

    async def _queued(
        self, body: dict[str, Any], role: Role | None, request_no: int, fault: FaultKind | None, send: Send
    ) -> None:
        state = self.state
        semaphore = state.capacity()
        if semaphore is not None:
            state.stats.queue_enter()
            try:
                await semaphore.acquire()
            finally:
                state.stats.queue_leave()
        state.stats.start()
        try:
            await self._answer(body, role, request_no, fault, send)
        finally:
            state.stats.finish()
            if semaphore is not None:
                semaphore.release()

    async def _answer(
        self, body: dict[str, Any], role: Role | None, request_no: int, fault: FaultKind | None, send: Send
    ) -> None:
        state = self.state
        faults = state.faults.config
        if fault in _HTTP_FAULTS:
            status = _HTTP_FAULTS[fault]
            headers = {"retry-after": f"{faults.retry_after_s:g}"} if status == 429 else None
            state.stats.status(status)
            message = (
                "Rate limit reached (simulated)" if status == 429 else f"Simulated server error {status}"
            )
            await _send_json(send, status, error_body(message, "server_error", status), headers)
            return
        latency = state.config.latency
        delay = latency.ttft_s + latency.jitter_s * uniform(state.config.seed, "jitter", request_no)
        if fault is FaultKind.SLOW_FIRST_BYTE:
            delay += faults.slow_first_byte_s
        if delay > 0:
            await asyncio.sleep(delay)
        try:
            reply = state.responder.respond(body, role)
        except Exception as exc:  # a simulator bug must still answer in the wire format
            log.exception("simulator responder failed")
            state.stats.status(500)
            await _send_json(send, 500, error_body(f"simulator error: {exc}", "server_error", 500))
            return
        if fault is FaultKind.UNPARSEABLE:
            reply = unparseable(reply)
        state.stats.count("prompt_tokens", reply.prompt_tokens)
        state.stats.count("completion_tokens", reply.completion_tokens)
        meta = (f"chatcmpl-sim-{uuid.uuid4().hex[:24]}", str(body["model"]), int(time.time()))
        status = await send_reply(
            send, body, reply, meta, fault, faults, latency.per_token_s, ConnectionDropped
        )
        state.stats.status(status)
        state.stats.count("completed")


def _routes(state: SimState) -> list[Route]:
    async def models(_: Request) -> JSONResponse:
        created = int(time.time())
        data = [
            {"id": n, "object": "model", "created": created, "owned_by": "skillharness-sim"}
            for n in state.config.model_names
        ]
        return JSONResponse({"object": "list", "data": data})

    return [
        Route("/v1/chat/completions", ChatCompletions(state)),
        Route("/v1/models", models, methods=["GET"]),
        *admin_routes(state),
    ]


def create_app(state: SimState) -> Starlette:
    """The ASGI app serving ``state``."""
    quiet_dropped_connections()
    return Starlette(routes=_routes(state))
