"""Every httpx exception maps into our tree; statuses and Retry-After are classified as data."""

from __future__ import annotations

import email.utils
import inspect
import random
import time

import httpx
import httpx_sse
import pytest

from skillharness.errors import AuthError, CircuitOpenError, FatalLLMError, LLMError, TransientLLMError
from skillharness.llm.config import RetryConfig
from skillharness.llm.errors import (
    HTTPX_ERROR_KINDS,
    error_for_status,
    map_httpx_error,
    parse_retry_after,
    retry_decision,
)
from skillharness.llm.retry import backoff_delay


def _all_exception_classes() -> set[type[BaseException]]:
    found: set[type[BaseException]] = set()
    roots = [obj for _, obj in inspect.getmembers(httpx, inspect.isclass) if issubclass(obj, Exception)]
    roots.append(httpx_sse.SSEError)
    stack = list(roots)
    while stack:
        cls = stack.pop()
        if cls.__module__.split(".")[0] in {"httpx", "httpx_sse"} and cls not in found:
            found.add(cls)
            stack.extend(cls.__subclasses__())
    return found


def _instance(cls: type[BaseException]) -> BaseException:
    request = httpx.Request("POST", "http://x/v1/chat/completions")
    if issubclass(cls, httpx.HTTPStatusError):
        return cls("boom", request=request, response=httpx.Response(500, request=request))
    try:
        return cls("boom")
    except TypeError:
        return cls()  # StreamError subclasses take no message


def test_mapping_is_complete_over_httpx_exception_classes() -> None:
    classes = _all_exception_classes()
    assert len(classes) >= 25
    missing = sorted(cls.__name__ for cls in classes if cls not in HTTPX_ERROR_KINDS)
    assert missing == [], f"httpx exceptions without an explicit mapping: {missing}"
    for cls in classes:
        mapped = map_httpx_error(_instance(cls), "ep")
        assert isinstance(mapped, LLMError)
        assert mapped.context["kind"] == HTTPX_ERROR_KINDS[cls][0]
        assert isinstance(mapped, TransientLLMError) == HTTPX_ERROR_KINDS[cls][1]


@pytest.mark.parametrize(
    "cls",
    [
        httpx.ConnectTimeout,
        httpx.ReadTimeout,
        httpx.WriteTimeout,
        httpx.PoolTimeout,
        httpx.RemoteProtocolError,
        httpx.ReadError,
        httpx.WriteError,
        httpx.ConnectError,
    ],
)
def test_audited_transport_errors_are_transient(cls: type[Exception]) -> None:
    assert retry_decision(map_httpx_error(cls("x"), "ep")).retry


@pytest.mark.parametrize("status", [408, 409, 425, 429, 500, 502, 503, 504, 599])
def test_transient_statuses(status: int) -> None:
    error = error_for_status(status, "body", "ep")
    assert isinstance(error, TransientLLMError)
    assert retry_decision(error).retry


@pytest.mark.parametrize("status", [400, 404, 405, 413, 422])
def test_fatal_statuses(status: int) -> None:
    error = error_for_status(status, "body", "ep")
    assert isinstance(error, FatalLLMError)
    assert not retry_decision(error).retry


@pytest.mark.parametrize("status", [401, 403])
def test_auth_statuses_name_endpoint_and_env_var(status: int) -> None:
    error = error_for_status(status, "bad key sk-123", "gpu-1", api_key_env="MY_KEY")
    assert isinstance(error, AuthError)
    assert "gpu-1" in str(error)
    assert "MY_KEY" in str(error)
    assert "sk-123" not in str(error)


def test_retry_after_seconds_and_http_date() -> None:
    assert parse_retry_after("3") == 3.0
    assert parse_retry_after(" 1.5 ") == 1.5
    assert parse_retry_after(None) is None
    assert parse_retry_after("soon") is None
    now = 1_000_000.0
    date = email.utils.formatdate(now + 42, usegmt=True)
    assert parse_retry_after(date, now=now) == pytest.approx(42, abs=1)
    assert parse_retry_after(email.utils.formatdate(now - 100, usegmt=True), now=now) == 0.0
    error = error_for_status(429, "", "ep", retry_after="7")
    assert retry_decision(error).retry_after_s == 7.0


@pytest.mark.parametrize("value", ["-5", "nan", "inf", "-inf", "1e3", "1_0", "0x10", "soon", ""])
def test_retry_after_that_is_not_delta_seconds_or_a_date_is_ignored(value: str) -> None:
    # Treated as absent, so the call backs off with jitter instead of retrying at once (a
    # negative or NaN value used to mean "now" for every caller together).
    assert parse_retry_after(value) is None


def test_retry_after_huge_values_are_capped_by_the_backoff() -> None:
    assert parse_retry_after("99999999999") == 99999999999.0
    far = email.utils.formatdate(time.time() + 10**9, usegmt=True)
    assert parse_retry_after(far) > 10**8
    config = RetryConfig(retry_after_cap_s=5.0)
    assert backoff_delay(1, parse_retry_after(far), config, random.Random(0)) == 5.0


def test_circuit_open_is_transient_for_the_run_but_not_retried() -> None:
    error = CircuitOpenError("open", kind="circuit_open")
    assert isinstance(error, TransientLLMError)
    assert not retry_decision(error).retry
