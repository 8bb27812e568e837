"""The streaming client and the composed stack against a scripted server over loopback."""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path

import pytest
from llm_support import Reply, ScriptedServer, chunk, fast_llm_config, make_request, ok_frames

from skillharness.errors import AuthError, FatalLLMError, TransientLLMError
from skillharness.llm import build_chat_model
from skillharness.llm.config import CacheConfig, EndpointConfig, RetryConfig, RolePrice, TimeoutConfig
from skillharness.llm.roles import Role, response_format
from skillharness.llm.types import SamplingParams

SECRET = "sk-test-0123456789abcdef-secret"


async def test_chat_content_usage_latency_and_request_body(scripted: ScriptedServer) -> None:
    scripted.push(Reply(frames=ok_frames("The answer", prompt=12, completion=5)))
    request = make_request(
        role=Role.JUDGE,
        response_format=response_format(Role.JUDGE),
        sampling=SamplingParams(temperature=0.2, seed=3),
        extra_body={"top_a": 0.1},
    )
    async with build_chat_model(fast_llm_config(scripted.base_url)) as model:
        response = await model.complete(request)
    assert response.content == "The answer"
    assert response.finish_reason == "stop"
    assert (response.usage.prompt_tokens, response.usage.completion_tokens) == (12, 5)
    assert response.latency_s > 0
    assert response.endpoint == scripted.base_url
    body = scripted.requests[0]
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["response_format"]["json_schema"]["name"] == "skillharness_judge"
    assert body["temperature"] == 0.2
    assert body["seed"] == 3
    assert body["top_a"] == 0.1
    assert "top_p" not in body  # unset parameters are not sent
    assert model.accountant.by_role[Role.JUDGE].prompt_tokens == 12


async def test_tool_call_deltas_over_http(scripted: ScriptedServer) -> None:
    scripted.push(
        Reply(
            frames=[
                chunk(
                    {
                        "tool_calls": [
                            {"index": 0, "id": "c9", "function": {"name": "submit_answer", "arguments": ""}}
                        ]
                    }
                ),
                chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"answer":'}}]}),
                chunk({"tool_calls": [{"index": 0, "function": {"arguments": ' "D"}'}}]}),
                chunk({}, "tool_calls"),
            ]
        )
    )
    async with build_chat_model(fast_llm_config(scripted.base_url)) as model:
        response = await model.complete(make_request(role=Role.AGENT))
    assert response.tool_calls[0].name == "submit_answer"
    assert json.loads(response.tool_calls[0].arguments) == {"answer": "D"}


async def test_content_tool_call_extraction_is_opt_in(scripted: ScriptedServer) -> None:
    content = '{"name": "submit_answer", "arguments": {"answer": "A"}}'
    tools = ({"type": "function", "function": {"name": "submit_answer", "parameters": {}}},)
    scripted.push(Reply(frames=ok_frames(content)), Reply(frames=ok_frames(content)))
    async with build_chat_model(fast_llm_config(scripted.base_url)) as plain:
        assert (await plain.complete(make_request(tools=tools))).tool_calls == ()
    async with build_chat_model(fast_llm_config(scripted.base_url, tool_calls_in_content=True)) as opted:
        assert (await opted.complete(make_request(tools=tools))).tool_calls[0].name == "submit_answer"


@pytest.mark.parametrize("status", [400, 404, 422])
async def test_fatal_status_is_not_retried(scripted: ScriptedServer, status: int) -> None:
    scripted.push(Reply(status=status, body='{"error": {"message": "bad request"}}'))
    async with build_chat_model(fast_llm_config(scripted.base_url)) as model:
        with pytest.raises(FatalLLMError, match=str(status)):
            await model.complete(make_request())
        assert model.retry.retries == 0
    assert len(scripted.requests) == 1


async def test_retry_after_is_honoured(scripted: ScriptedServer) -> None:
    scripted.push(Reply(status=429, headers={"Retry-After": "0.4"}))
    async with build_chat_model(fast_llm_config(scripted.base_url)) as model:
        started = time.monotonic()
        response = await model.complete(make_request())
        elapsed = time.monotonic() - started
    assert response.content == "hello"
    assert len(scripted.requests) == 2
    assert elapsed >= 0.4  # the jittered backoff alone would be at most 0.01 s


async def test_attempt_cap(scripted: ScriptedServer) -> None:
    scripted.default = Reply(status=503)
    async with build_chat_model(fast_llm_config(scripted.base_url)) as model:
        with pytest.raises(TransientLLMError) as info:
            await model.complete(make_request())
    assert len(scripted.requests) == 8  # the default cap
    assert info.value.context["attempts"] == 8
    assert "attempt cap" in info.value.context["gave_up"]


async def test_total_deadline_per_attempt(scripted: ScriptedServer) -> None:
    scripted.push(Reply(delay_s=1.0))
    config = fast_llm_config(scripted.base_url, timeouts=TimeoutConfig(total_s=0.2, read_s=5))
    async with build_chat_model(config) as model:
        response = await model.complete(make_request())  # first attempt times out, second is fine
    assert response.content == "hello"
    assert len(scripted.requests) == 2


async def test_api_key_sent_but_absent_from_logs_and_cache(
    scripted: ScriptedServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setenv("SH_TEST_KEY", SECRET)
    caplog.set_level(logging.DEBUG)
    scripted.push(Reply(status=503), Reply())
    endpoint = EndpointConfig(base_url=scripted.base_url, api_key_env="SH_TEST_KEY")
    cache_file = tmp_path / "c.sqlite"
    cache = CacheConfig(url=f"sqlite:///{cache_file}")
    async with build_chat_model(fast_llm_config(scripted.base_url, endpoint=endpoint), cache) as model:
        await model.complete(make_request())
        assert (await model.complete(make_request())).cache_hit
    assert scripted.headers[-1]["authorization"] == f"Bearer {SECRET}"
    assert SECRET not in caplog.text
    assert "retrying" in caplog.text  # the logs did record the retry
    files = sorted(tmp_path.iterdir())  # noqa: ASYNC240 - a test's own tmp dir, after the calls
    assert files
    for path in files:
        assert SECRET.encode() not in path.read_bytes()


async def test_auth_error_names_endpoint_and_env_var_never_the_key(
    scripted: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SH_TEST_KEY", SECRET)
    scripted.push(Reply(status=401, body=f'{{"error": "invalid key {SECRET}"}}'))
    endpoint = EndpointConfig(base_url=scripted.base_url, api_key_env="SH_TEST_KEY", name="gpu-a")
    async with build_chat_model(fast_llm_config(scripted.base_url, endpoint=endpoint)) as model:
        with pytest.raises(AuthError) as info:
            await model.complete(make_request())
    message = str(info.value)
    assert "gpu-a" in message
    assert "SH_TEST_KEY" in message
    assert SECRET not in message
    assert SECRET not in repr(info.value.context)
    assert len(scripted.requests) == 1


async def test_missing_key_env_var_is_an_auth_error(
    scripted: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SH_ABSENT_KEY", raising=False)
    endpoint = EndpointConfig(base_url=scripted.base_url, api_key_env="SH_ABSENT_KEY")
    async with build_chat_model(fast_llm_config(scripted.base_url, endpoint=endpoint)) as model:
        with pytest.raises(AuthError, match="SH_ABSENT_KEY"):
            await model.complete(make_request())
    assert scripted.requests == []


async def test_error_frames_over_http_are_retried(scripted: ScriptedServer) -> None:
    vllm = json.dumps({"error": {"message": "oom", "code": 500}})
    scripted.push(Reply(frames=[chunk({"content": "x"}), vllm]), Reply(frames=[vllm], done=False), Reply())
    async with build_chat_model(fast_llm_config(scripted.base_url)) as model:
        assert (await model.complete(make_request())).content == "hello"
    assert len(scripted.requests) == 3


PROXY_PAGE = Reply(
    status=200,
    body="upstream connect error or disconnect/reset before headers",
    headers={"content-type": "text/plain; charset=utf-8"},
)


@pytest.mark.parametrize("content_type", ["text/plain; charset=utf-8", "text/html", "application/json"])
async def test_a_200_that_is_not_an_event_stream_is_retried(
    scripted: ScriptedServer, content_type: str
) -> None:
    scripted.push(Reply(status=200, body="<html>proxy login</html>", headers={"content-type": content_type}))
    async with build_chat_model(fast_llm_config(scripted.base_url)) as model:
        assert (await model.complete(make_request())).content == "hello"
        assert model.retry.retries == 1
    assert len(scripted.requests) == 2


async def test_a_persistent_proxy_page_ends_naming_its_content_type_and_the_endpoint(
    scripted: ScriptedServer,
) -> None:
    scripted.default = PROXY_PAGE
    endpoint = EndpointConfig(base_url=scripted.base_url, name="gpu-behind-proxy")
    retry = RetryConfig(max_attempts=3, base_delay_s=0.001, max_delay_s=0.002)
    async with build_chat_model(fast_llm_config(scripted.base_url, endpoint=endpoint, retry=retry)) as model:
        with pytest.raises(TransientLLMError) as info:
            await model.complete(make_request())
    message = str(info.value)
    assert info.value.context["kind"] == "not_event_stream"
    assert info.value.context["attempts"] == 3
    assert "gpu-behind-proxy" in message
    assert "text/plain; charset=utf-8" in message
    assert "upstream connect error" in message
    assert len(scripted.requests) == 3


async def test_accounting_per_role_with_prices_and_free_cache_hits(
    scripted: ScriptedServer, tmp_path: Path
) -> None:
    scripted.default = Reply(frames=ok_frames("x", prompt=1000, completion=500))
    prices = {Role.EVOLVE: RolePrice(prompt_per_mtok=2.0, completion_per_mtok=10.0)}
    cache = CacheConfig(url=f"sqlite:///{tmp_path / 'c.sqlite'}")
    async with build_chat_model(fast_llm_config(scripted.base_url, prices=prices), cache) as model:
        await model.complete(make_request("a", role=Role.EVOLVE))
        await model.complete(make_request("a", role=Role.EVOLVE))  # a cache hit: no tokens, no cost
        await model.complete(make_request("b", role=Role.AGENT))
    evolve = model.accountant.by_role[Role.EVOLVE]
    assert (evolve.calls, evolve.cache_hits, evolve.prompt_tokens, evolve.completion_tokens) == (
        2,
        1,
        1000,
        500,
    )
    assert evolve.cost == pytest.approx((1000 * 2.0 + 500 * 10.0) / 1e6)
    assert model.accountant.by_role[Role.AGENT].cost == 0.0
    assert model.accountant.total_cost == pytest.approx(evolve.cost)
    assert set(model.accountant.summary()) == {"evolve", "agent"}


async def test_a_server_echoing_the_key_in_an_error_body_does_not_leak_it(
    scripted: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SH_TEST_KEY", SECRET)
    scripted.push(Reply(status=400, body=f'{{"error": "bad request from key {SECRET}"}}'))
    endpoint = EndpointConfig(base_url=scripted.base_url, api_key_env="SH_TEST_KEY")
    async with build_chat_model(fast_llm_config(scripted.base_url, endpoint=endpoint)) as model:
        with pytest.raises(FatalLLMError) as info:
            await model.complete(make_request())
    assert SECRET not in str(info.value)
    assert "***" in str(info.value)


async def test_sample_idx_is_sent_when_positive_unless_disabled(scripted: ScriptedServer) -> None:
    async with build_chat_model(fast_llm_config(scripted.base_url)) as model:
        await model.complete(make_request(sample_idx=0))
        await model.complete(make_request(sample_idx=2))
    off = EndpointConfig(base_url=scripted.base_url, send_sample_idx=False)
    async with build_chat_model(fast_llm_config(scripted.base_url, endpoint=off)) as model:
        await model.complete(make_request(sample_idx=3))
    assert [body.get("sample_idx") for body in scripted.requests] == [None, 2, None]


async def test_a_key_echoed_in_an_error_frame_never_reaches_errors_or_logs(
    scripted: ScriptedServer, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("SH_TEST_KEY", SECRET)
    caplog.set_level(logging.DEBUG)
    frame = json.dumps({"error": {"message": f"engine died serving key {SECRET}", "code": 500}})
    scripted.push(*[Reply(frames=[frame], done=False) for _ in range(8)])
    endpoint = EndpointConfig(base_url=scripted.base_url, api_key_env="SH_TEST_KEY")
    async with build_chat_model(fast_llm_config(scripted.base_url, endpoint=endpoint)) as model:
        with pytest.raises(TransientLLMError) as info:
            await model.complete(make_request())
    assert "engine died" in str(info.value)
    assert SECRET not in str(info.value)
    assert SECRET not in repr(info.value.context)
    assert SECRET not in caplog.text


@pytest.mark.parametrize("long", [False, True])
async def test_a_server_that_ignores_stream_true_is_fatal_at_once_and_says_so(
    scripted: ScriptedServer, long: bool
) -> None:
    """A whole chat completion in JSON is no proxy page: no retry makes the server stream, so the
    run stops on it instead of waiting out the breaker, and the message names the cause."""
    content = "x" * (5000 if long else 5)  # past the body's read limit: judged by its start
    completion = {
        "id": "c",
        "object": "chat.completion",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
        ],
    }
    scripted.default = Reply(
        status=200, body=json.dumps(completion), headers={"content-type": "application/json"}
    )
    async with build_chat_model(fast_llm_config(scripted.base_url)) as model:
        with pytest.raises(FatalLLMError, match="ignoring stream: true") as info:
            await model.complete(make_request())
    assert info.value.context["kind"] == "not_streaming"
    assert len(scripted.requests) == 1
