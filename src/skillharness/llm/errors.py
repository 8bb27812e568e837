"""Translating transport failures into our error tree, and retry decisions as data.

Every httpx exception class maps to exactly one entry of :data:`HTTPX_ERROR_KINDS` (a test
walks httpx's classes and checks the table is complete). HTTP statuses map through
:func:`error_for_status`. The retry layer never inspects exceptions itself: it asks
:func:`retry_decision` for a frozen :class:`RetryDecision`.
"""

from __future__ import annotations

import email.utils
import json
import re
import time
from dataclasses import dataclass

import httpx
import httpx_sse

from skillharness.errors import AuthError, CircuitOpenError, FatalLLMError, LLMError, TransientLLMError
from skillharness.llm.redact import redact

__all__ = [
    "FATAL_STATUSES",
    "HTTPX_ERROR_KINDS",
    "OUT_OF_ROTATION_KINDS",
    "REFUSAL_LIMITS",
    "REQUEST_REFUSALS",
    "TRANSIENT_STATUSES",
    "RetryDecision",
    "error_for_status",
    "fatal",
    "likely_limit",
    "map_httpx_error",
    "not_event_stream",
    "parse_retry_after",
    "refuses_request",
    "retry_decision",
    "transient",
]

# (kind, transient). Kinds name the failure in logs, errors and statistics.
HTTPX_ERROR_KINDS: dict[type[BaseException], tuple[str, bool]] = {
    httpx.ConnectTimeout: ("connect_timeout", True),
    httpx.ReadTimeout: ("read_timeout", True),
    httpx.WriteTimeout: ("write_timeout", True),
    httpx.PoolTimeout: ("pool_timeout", True),
    httpx.TimeoutException: ("timeout", True),
    httpx.ConnectError: ("connect_error", True),  # refused: a server restarting
    httpx.ReadError: ("read_error", True),
    httpx.WriteError: ("write_error", True),
    httpx.CloseError: ("close_error", True),
    httpx.NetworkError: ("network_error", True),
    httpx.RemoteProtocolError: ("remote_protocol_error", True),  # e.g. connection dropped mid-body
    httpx.LocalProtocolError: ("local_protocol_error", False),  # our request is malformed
    httpx.ProtocolError: ("protocol_error", True),
    httpx.ProxyError: ("proxy_error", True),
    httpx.UnsupportedProtocol: ("unsupported_protocol", False),  # a base_url typo
    httpx.TransportError: ("transport_error", True),
    httpx.DecodingError: ("decoding_error", True),  # a garbled body; another attempt may be clean
    httpx.TooManyRedirects: ("too_many_redirects", False),
    httpx.RequestError: ("request_error", True),
    httpx.HTTPStatusError: ("http_status", False),  # we never call raise_for_status; status is mapped
    httpx.HTTPError: ("http_error", False),
    httpx.InvalidURL: ("invalid_url", False),
    httpx.CookieConflict: ("cookie_conflict", False),
    httpx.StreamClosed: ("stream_closed", False),  # programming errors: retrying cannot help
    httpx.StreamConsumed: ("stream_consumed", False),
    httpx.ResponseNotRead: ("response_not_read", False),
    httpx.RequestNotRead: ("request_not_read", False),
    httpx.StreamError: ("stream_error", False),
    # A 200 without text/event-stream: a gateway's or proxy's page in front of the model server
    # (the client checks the content type itself first; see not_event_stream).
    httpx_sse.SSEError: ("not_event_stream", True),
}

# A replica that refuses connections, cannot be reached, or drops them mid-call is down or
# restarting: the router takes it out of the rotation at once when another replica accepts.
OUT_OF_ROTATION_KINDS = frozenset(
    {
        "connect_error",
        "connect_timeout",
        "read_error",
        "write_error",
        "network_error",
        "remote_protocol_error",
    }
)

# RFC 9110 delta-seconds are digits; a decimal fraction is tolerated, signs and exponents are not.
_DELTA_SECONDS = re.compile(r"\d+(?:\.\d+)?")

TRANSIENT_STATUSES = frozenset({408, 409, 425, 429})  # plus every 5xx
FATAL_STATUSES = frozenset({400, 401, 403, 404, 422})  # and every other 4xx
# Refusals of what the request carries (a malformed or too long prompt, a context overflow): the
# same request gets the same answer, and another bundle's request may not. Credentials (401, 403),
# a wrong model or path (404, 405) and a proxy (407) refuse every request alike: those are not.
REQUEST_REFUSALS = frozenset({400, 411, 413, 414, 415, 422, 431})


# The server limit a refusal most likely hit (``likely_limit``), and what to change. A refusal
# is a server set up below the run's requests, not a wrong answer: these name the knob on both sides.
REFUSAL_LIMITS: dict[str, str] = {
    "body_size": (
        "request body size: a proxy in front of the server (nginx client_max_body_size) or the "
        "server itself takes smaller bodies than the run sends; raise that limit, or send fewer "
        "frames (agent.max_frames)"
    ),
    "images_per_prompt": (
        "images per prompt: the server takes fewer images in one request than agent.max_frames "
        "(vLLM --limit-mm-per-prompt); raise it, or lower agent.max_frames"
    ),
    "max_tokens": (
        "max_tokens or context length: the request's max_tokens, or its prompt with it, is more than "
        "the server allows (vLLM --max-model-len); lower agent.sampling.max_tokens or agent.max_frames, "
        "or raise the server's limit"
    ),
    "header_size": "URL or header size (HTTP 414/431): a proxy's header limit",
    "unknown": "a limit the server's message names",
}

_IMAGE_WORDS = ("image", "multimodal", "multi-modal", "mm_", "limit-mm", "media item")
_TOKEN_WORDS = ("max_tokens", "max_new_tokens", "max_completion_tokens", "context length", "context window")


def likely_limit(status: int, server_text: str) -> str:
    """The :data:`REFUSAL_LIMITS` key a refusal most likely hit, from its status and message.

    A 413 is a body limit whatever it says (nginx's page says nothing else); vLLM refuses too many
    images and too many tokens with a 400 whose message names them.
    """
    text = server_text.lower()
    if status == 413 or "too large" in text or "entity too large" in text:
        return "body_size"
    if status in (414, 431):
        return "header_size"
    if any(word in text for word in _IMAGE_WORDS):
        return "images_per_prompt"
    if any(word in text for word in _TOKEN_WORDS) or ("token" in text and "maximum" in text):
        return "max_tokens"
    return "unknown"


def refuses_request(exc: BaseException) -> bool:
    """``exc`` is the server's deterministic refusal of this request's content (see REQUEST_REFUSALS)."""
    return isinstance(exc, FatalLLMError) and exc.context.get("status") in REQUEST_REFUSALS


def transient(
    kind: str, message: str, endpoint: str, *, retry_after_s: float | None = None, **context: object
) -> TransientLLMError:
    """A TransientLLMError whose context names its kind and endpoint."""
    return TransientLLMError(
        f"{endpoint}: {message}", retry_after_s=retry_after_s, kind=kind, endpoint=endpoint, **context
    )


def fatal(kind: str, message: str, endpoint: str, **context: object) -> FatalLLMError:
    """A FatalLLMError whose context names its kind and endpoint."""
    return FatalLLMError(f"{endpoint}: {message}", kind=kind, endpoint=endpoint, **context)


def map_httpx_error(exc: BaseException, endpoint: str) -> LLMError:
    """Our error for an httpx (or httpx-sse) exception; the most specific table entry wins."""
    for cls in type(exc).__mro__:
        if cls in HTTPX_ERROR_KINDS:
            kind, is_transient = HTTPX_ERROR_KINDS[cls]
            make = transient if is_transient else fatal
            return make(kind, f"{kind}: {exc!r}", endpoint)
    return fatal("unexpected", f"unexpected error: {exc!r}", endpoint)


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or HTTP date), or None.

    Anything else (a negative number, ``nan``, ``inf``, garbage) is None: the caller then backs
    off with jitter rather than retrying at once. A date in the past is 0.
    """
    if not value:
        return None
    text = value.strip()
    if _DELTA_SECONDS.fullmatch(text):
        return float(text)  # may be huge or inf (400 digits): the backoff caps it
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def error_for_status(
    status: int,
    body: str,
    endpoint: str,
    *,
    retry_after: str | None = None,
    api_key_env: str | None = None,
    secrets: tuple[str, ...] = (),
) -> LLMError:
    """Our error for a non-200 HTTP status. ``body`` is the server's reply (or its first part).

    ``secrets`` are masked in the whole body before it is cut to an excerpt: a cut inside an
    echoed key would otherwise leave its prefix (see :mod:`skillharness.llm.redact`).
    """
    excerpt = redact(body, secrets)[:300]
    if status in (401, 403):
        where = (
            f"the key in env var {api_key_env}" if api_key_env else "no API key (set endpoints[].api_key_env)"
        )
        return AuthError(
            f"{endpoint} refused the credentials (HTTP {status}); check {where}",
            kind=f"http_{status}",
            endpoint=endpoint,
            env_var=api_key_env,
            status=status,
        )
    if status in TRANSIENT_STATUSES or 500 <= status <= 599:
        return transient(
            f"http_{status}",
            f"HTTP {status}: {excerpt}",
            endpoint,
            status=status,
            retry_after_s=parse_retry_after(retry_after),
        )
    return fatal(f"http_{status}", f"HTTP {status}: {excerpt}", endpoint, status=status)


def not_event_stream(
    status: int, content_type: str, body: str, endpoint: str, *, secrets: tuple[str, ...] = ()
) -> LLMError:
    """Our error for an answer that is not the event stream a chat completion must be.

    Load balancers and gateways answer with an HTML or plain-text page (status 200 included) while
    the model server behind them restarts or is replaced: transient, like the 502 it stands for.
    The message names the content type, so a page that persists past every retry says what it was.
    A whole chat completion in JSON is another thing: a server that ignores ``stream: true``, which
    no retry changes, so it is fatal and says so.
    """
    excerpt = redact(body, secrets)[:300]
    shown = content_type or "none"
    if _is_completion(body):
        return fatal(
            "not_streaming",
            f"HTTP {status}: the endpoint answered with a whole chat completion ({shown!r}), ignoring "
            "stream: true; skillharness reads the event stream (text/event-stream), so serve the model "
            "with streaming on (an OpenAI-compatible server streams when the request asks)",
            endpoint,
            status=status,
            content_type=content_type,
        )
    return transient(
        "not_event_stream",
        f"HTTP {status} with Content-Type {shown!r}, not an event stream (text/event-stream); "
        f"a gateway or proxy page? body: {excerpt!r}",
        endpoint,
        status=status,
        content_type=content_type,
    )


_CHOICES = re.compile(r'^\s*\{.*"choices"\s*:\s*\[\s*\{.*"message"\s*:', re.DOTALL)


def _is_completion(body: str) -> bool:
    """Whether ``body`` (perhaps only its first part) is a whole, non-streamed chat completion."""
    try:
        doc = json.loads(body)
    except ValueError:  # cut at the read limit: the shape of its start
        return bool(_CHOICES.match(body))
    return isinstance(doc, dict) and isinstance(doc.get("choices"), list) and "error" not in doc


@dataclass(frozen=True)
class RetryDecision:
    """Whether to retry, why, and any server-requested delay."""

    retry: bool
    kind: str
    retry_after_s: float | None = None


def retry_decision(exc: BaseException) -> RetryDecision:
    """The retry layer's only source of truth about an exception."""
    kind = str(getattr(exc, "context", {}).get("kind", type(exc).__name__))
    if isinstance(exc, CircuitOpenError):
        return RetryDecision(False, "circuit_open")  # the caller already waited its deadline
    if isinstance(exc, TransientLLMError):
        return RetryDecision(True, kind, exc.retry_after_s)
    return RetryDecision(False, kind)
