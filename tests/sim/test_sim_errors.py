"""Malformed requests, unknown models and oversized bodies get OpenAI-style 4xx errors."""

from __future__ import annotations

import httpx
import openai
import pytest
from sim_support import SIM_TEST_WORLD

from skillharness.sim import SimConfig, SimServer

pytestmark = pytest.mark.sim_world(SIM_TEST_WORLD, questions="questions")


def _post(sim, content: bytes | None = None, json_body=None, headers=None) -> httpx.Response:
    return httpx.post(
        f"{sim.base_url}/chat/completions", content=content, json=json_body, headers=headers, timeout=10
    )


def _assert_openai_error(response: httpx.Response, status: int) -> dict:
    assert response.status_code == status
    error = response.json()["error"]
    assert {"message", "type", "code"} <= set(error)
    assert error["message"]
    return error


def test_unknown_model_is_404_model_not_found(sim, client):
    error = _assert_openai_error(
        _post(sim, json_body={"model": "gpt-x", "messages": [{"role": "user", "content": "hi"}]}), 404
    )
    assert error["code"] == "model_not_found"
    with pytest.raises(openai.NotFoundError):
        client.chat.completions.create(model="gpt-x", messages=[{"role": "user", "content": "hi"}])


@pytest.mark.parametrize(
    "content",
    [
        b"{not json",
        b"[1, 2]",
        b'"text"',
        b'{"messages": [{"role": "user", "content": "x"}]}',
        b'{"model": "sim-vl"}',
        b'{"model": "sim-vl", "messages": []}',
        b'{"model": "sim-vl", "messages": ["x"]}',
        b'{"model": "sim-vl", "messages": [{"role": "wizard", "content": "x"}]}',
        b'{"model": "sim-vl", "messages": [{"role": "user"}], "stream": "yes"}',
        b'{"model": "sim-vl", "messages": [{"role": "user"}], "temperature": "hot"}',
        b'{"model": "sim-vl", "messages": [{"role": "user"}], "n": 3}',
        b'{"model": "sim-vl", "messages": [{"role": "user"}], "tools": {"a": 1}}',
        b'{"model": "sim-vl", "messages": [{"role": "user"}], "sample_idx": "0"}',
        b"\xff\xfe",
        # Shapes the roles read: they must be refused up front, never crash into a 500 (which a
        # client retries as a server fault) or a dropped stream.
        b'{"model": "sim-vl", "messages": [{"role": "user"}], "tools": [{"function": "x"}]}',
        b'{"model": "sim-vl", "messages": [{"role": "user"}], "tools": [{"function": {"name": 5}}]}',
        b'{"model": "sim-vl", "messages": [{"role": "user"}], "response_format": {"type": "json_schema",'
        b' "json_schema": "x"}}',
        b'{"model": "sim-vl", "messages": [{"role": "user"}], "tool_choice": {"function": "submit_answer"}}',
        b'{"model": "sim-vl", "messages": [{"role": "user"}], "tool_choice": ["x"]}',
        b'{"model": "sim-vl", "messages": [{"role": "user"}], "stream": true, "stream_options": "x"}',
        b'{"model": "sim-vl", "messages": [{"role": "user", "content": 5}]}',
        b'{"model": "sim-vl", "messages": [{"role": "assistant", "tool_calls": "x"}]}',
        b'{"model": "sim-vl", "messages": [{"role": "assistant", "tool_calls": ["x"]}]}',
    ],
)
def test_malformed_requests_are_400(sim, content):
    error = _assert_openai_error(
        _post(sim, content=content, headers={"content-type": "application/json"}), 400
    )
    assert error["type"] == "invalid_request_error"


def test_malformed_request_raises_bad_request_in_openai_client(client, sim):
    with pytest.raises(openai.BadRequestError):
        client.chat.completions.create(model=sim.model_name, messages=[{"role": "user", "content": "x"}], n=2)


def test_oversized_body_is_413(questions):
    with SimServer(SimConfig(max_body_bytes=2048), questions=questions) as small:
        big = {"model": "sim-vl", "messages": [{"role": "user", "content": "x" * 5000}]}
        _assert_openai_error(_post(small, json_body=big), 413)
        assert small.stats()["statuses"] == {"413": 1}


def test_wrong_method_is_a_json_405(sim):
    response = httpx.get(f"{sim.base_url}/chat/completions", timeout=10)
    _assert_openai_error(response, 405)
