"""Which request gets which fault: seeded random rates, filters, and forced faults for tests.

A request gets at most one fault. Forced faults (``force(kind, count)``) come first and make a
test deterministic ("the next request is cut"); otherwise the configured rates decide, with a
draw that depends only on the seed and the request's number.

Every kind but one is an infrastructure failure. ``unparseable`` is not: the reply is complete
and well-formed, only its text is something no answer parser accepts. It is drawn per request,
so the same request may parse once and not the next time, as with a real model sampling at
temperature > 0 (the simulated roles alone are deterministic per request).
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from typing import Any

from skillharness.llm.roles import Role
from skillharness.sim.config import FaultConfig, FaultKind
from skillharness.sim.draw import uniform, weighted_choice
from skillharness.sim.wire import Reply, error_body, estimate_tokens

__all__ = [
    "FATAL_FAULTS",
    "GATEWAY_PAGES",
    "OUTPUT_FAULTS",
    "STREAM_ONLY_FAULTS",
    "UNPARSEABLE_TEXT",
    "FaultInjector",
    "GatewayPage",
    "limit_refusal",
    "unparseable",
]

# Faults a client must not retry (every other kind is transient, or a slow but good reply).
FATAL_FAULTS = frozenset({FaultKind.HTTP_401})

# Faults that are model output, not infrastructure: the client gets a complete reply and returns it.
OUTPUT_FAULTS = frozenset({FaultKind.UNPARSEABLE})

UNPARSEABLE_TEXT = "Several options could fit; none of them is clearly right."

# Faults that only make sense inside an SSE stream; a non-streamed reply shows them differently
# (documented in docs/simulator.md): truncate/reset drop the connection mid-body, error frames
# become a 500, a malformed chunk becomes a broken JSON body.
STREAM_ONLY_FAULTS = frozenset(
    {
        FaultKind.TRUNCATE,
        FaultKind.RESET,
        FaultKind.VLLM_ERROR_FRAME,
        FaultKind.LLAMACPP_ERROR_FRAME,
        FaultKind.MALFORMED_CHUNK,
    }
)


@dataclass(frozen=True)
class GatewayPage:
    """What a load balancer or proxy in front of the model server answers in its place."""

    status: int
    content_type: str
    body: bytes


def _nginx(status: int, reason: str) -> GatewayPage:
    title = f"{status} {reason}"
    html = (
        f"<html>\r\n<head><title>{title}</title></head>\r\n<body>\r\n"
        f"<center><h1>{title}</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"
    )
    return GatewayPage(status, "text/html", html.encode())


# Pages sent without asking the model (the gateway answers in its place), each with the status
# and content type real proxies use: Envoy's plain-text 200 while its upstream resets, nginx's pages.
GATEWAY_PAGES: dict[FaultKind, GatewayPage] = {
    FaultKind.TEXT_PLAIN_200: GatewayPage(
        200, "text/plain; charset=utf-8", b"upstream connect error or disconnect/reset before headers"
    ),
    FaultKind.HTML_502: _nginx(502, "Bad Gateway"),
    FaultKind.HTML_504: _nginx(504, "Gateway Time-out"),
}


def limit_refusal(
    body_bytes: int, body: dict[str, Any], role: Role | None, config: FaultConfig
) -> GatewayPage | None:
    """The refusal of a server set up below the agent's requests, or None.

    Deterministic, unlike the drawn faults: the same request is refused every time, as a real limit
    refuses it. Only agent requests are judged, so a text-only preflight probe or a judge call passes
    while every request with frames is refused (the misconfiguration this reproduces).
    """
    if role is not Role.AGENT:
        return None
    if config.refuse_body_over is not None and body_bytes > config.refuse_body_over:
        return _nginx(413, "Request Entity Too Large")
    images = _images(body.get("messages"))
    if config.refuse_images_over is not None and images > config.refuse_images_over:
        message = (
            f"At most {config.refuse_images_over} image(s) may be provided in one prompt; "
            f"this request has {images}."
        )
        payload = json.dumps(error_body(message, "BadRequestError", 400)).encode()
        return GatewayPage(400, "application/json", payload)
    return None


def _images(messages: Any) -> int:
    if not isinstance(messages, list):
        return 0
    return sum(
        1
        for message in messages
        if isinstance(message, dict) and isinstance(message.get("content"), list)
        for part in message["content"]
        if isinstance(part, dict) and part.get("type") == "image_url"
    )


@dataclass
class _Forced:
    kind: FaultKind
    remaining: int
    roles: frozenset[Role] | None


class FaultInjector:
    """Decides the fault (or none) of each request; safe to call from any thread."""

    def __init__(self, config: FaultConfig, seed: int) -> None:
        self._lock = threading.Lock()
        self._seed = seed
        self._config = config
        self._forced: list[_Forced] = []
        self._eligible = 0

    @property
    def config(self) -> FaultConfig:
        return self._config

    def configure(self, config: FaultConfig) -> None:
        """Replace the random fault settings (forced faults stay queued)."""
        with self._lock:
            self._config = config
            self._eligible = 0

    def force(self, kind: FaultKind, count: int = 1, roles: tuple[Role, ...] | None = None) -> None:
        """Give the next ``count`` requests (of ``roles``, if given) fault ``kind``."""
        with self._lock:
            self._forced.append(_Forced(FaultKind(kind), count, frozenset(roles) if roles else None))

    def clear(self) -> None:
        """Drop every forced fault and every random rate."""
        with self._lock:
            self._forced.clear()
            self._config = FaultConfig()
            self._eligible = 0

    def decide(self, request_no: int, role: Role | None) -> FaultKind | None:
        """The fault of request number ``request_no`` (1-based) playing ``role``."""
        with self._lock:
            for entry in self._forced:
                if entry.roles is None or role in entry.roles:
                    entry.remaining -= 1
                    if entry.remaining <= 0:
                        self._forced.remove(entry)
                    return entry.kind
            config = self._config
            if not config.rates or (config.roles is not None and role not in config.roles):
                return None
            self._eligible += 1
            if config.every_k is not None and self._eligible % config.every_k != 0:
                return None
        items: list[tuple[FaultKind | None, float]] = list(config.rates.items())
        items.append((None, max(0.0, 1.0 - sum(config.rates.values()))))
        return weighted_choice(items, uniform(self._seed, "fault", request_no))


def unparseable(reply: Reply) -> Reply:
    """``reply`` turned into plain text that names no option and calls no tool (finish ``stop``)."""
    return Reply(UNPARSEABLE_TEXT, (), "stop", reply.prompt_tokens, estimate_tokens(UNPARSEABLE_TEXT))
