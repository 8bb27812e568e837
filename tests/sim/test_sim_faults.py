"""Every fault mode is injectable, deterministic when forced, at its rate when random, and counted."""

from __future__ import annotations

import json
import math

import httpx
import openai
import pytest
from sim_support import SIM_TEST_WORLD, first_messages, tools

from skillharness.llm.roles import Role, response_format
from skillharness.sim import FaultKind
from skillharness.sim.faults import UNPARSEABLE_TEXT

pytestmark = pytest.mark.sim_world(SIM_TEST_WORLD, questions="questions")


def _body(sim, questions, stream=True):
    return {
        "model": sim.model_name,
        "messages": first_messages(questions[0]),
        "tools": tools(),
        "stream": stream,
    }


def _stream_lines(sim, body, timeout=10.0):
    with httpx.stream("POST", f"{sim.base_url}/chat/completions", json=body, timeout=timeout) as response:
        return response.status_code, response.headers, [line for line in response.iter_lines() if line]


def test_forced_truncate_ends_the_stream_without_done(sim, questions):
    sim.force_fault(FaultKind.TRUNCATE)
    status, _, lines = _stream_lines(sim, _body(sim, questions))
    assert status == 200
    assert lines
    assert "data: [DONE]" not in lines
    assert all(json.loads(line.removeprefix("data: ")) for line in lines)
    assert sim.stats()["faults"] == {"truncate": 1}
    # only the next request was affected
    assert _stream_lines(sim, _body(sim, questions))[2][-1] == "data: [DONE]"


def test_forced_reset_drops_the_connection_mid_stream(sim, questions):
    sim.force_fault(FaultKind.RESET)
    with pytest.raises(httpx.RemoteProtocolError):
        _stream_lines(sim, _body(sim, questions))
    assert sim.stats()["faults"] == {"reset": 1}


def test_truncate_and_reset_of_a_whole_body_drop_the_connection(sim, questions):
    for kind in (FaultKind.TRUNCATE, FaultKind.RESET):
        sim.force_fault(kind)
        with pytest.raises(httpx.RemoteProtocolError):
            httpx.post(
                f"{sim.base_url}/chat/completions", json=_body(sim, questions, stream=False), timeout=10
            )


@pytest.mark.parametrize(
    ("kind", "status", "error"),
    [
        (FaultKind.HTTP_429, 429, openai.RateLimitError),
        (FaultKind.HTTP_500, 500, openai.InternalServerError),
        (FaultKind.HTTP_502, 502, openai.InternalServerError),
        (FaultKind.HTTP_503, 503, openai.InternalServerError),
    ],
)
def test_forced_http_errors_have_openai_bodies(sim, client, questions, kind, status, error):
    sim.force_fault(kind)
    response = httpx.post(f"{sim.base_url}/chat/completions", json=_body(sim, questions, False), timeout=10)
    assert response.status_code == status
    assert set(response.json()["error"]) >= {"message", "type", "code"}
    if status == 429:
        assert float(response.headers["retry-after"]) == sim.state.faults.config.retry_after_s
    sim.force_fault(kind)
    with pytest.raises(error):
        client.chat.completions.create(
            model=sim.model_name, messages=first_messages(questions[0]), tools=tools()
        )
    assert sim.stats()["faults"] == {kind.value: 2}


@pytest.mark.parametrize(
    ("kind", "status", "content_type", "needle"),
    [
        (FaultKind.TEXT_PLAIN_200, 200, "text/plain", "upstream connect error"),
        (FaultKind.HTML_502, 502, "text/html", "<title>502 Bad Gateway</title>"),
        (FaultKind.HTML_504, 504, "text/html", "<title>504 Gateway Time-out</title>"),
    ],
)
def test_gateway_pages_replace_the_stream(sim, questions, kind, status, content_type, needle):
    sim.force_fault(kind)
    status_seen, headers, lines = _stream_lines(sim, _body(sim, questions))
    assert status_seen == status
    assert headers["content-type"].startswith(content_type)
    assert needle in "\n".join(lines)
    assert not any(line.startswith("data:") for line in lines)
    assert sim.stats()["faults"] == {kind.value: 1}
    assert sim.stats()["statuses"] == {str(status): 1}


def test_vllm_error_frame_is_followed_by_done(sim, questions):
    sim.force_fault(FaultKind.VLLM_ERROR_FRAME)
    _, _, lines = _stream_lines(sim, _body(sim, questions))
    assert lines[-1] == "data: [DONE]"
    assert "error" in json.loads(lines[-2].removeprefix("data: "))


def test_llamacpp_error_frame_ends_the_stream_without_done(sim, questions):
    sim.force_fault(FaultKind.LLAMACPP_ERROR_FRAME)
    _, _, lines = _stream_lines(sim, _body(sim, questions))
    assert "data: [DONE]" not in lines
    assert json.loads(lines[-1].removeprefix("data: "))["error"]["code"] == 500


def test_unparseable_is_a_complete_reply_that_names_no_answer(sim, questions):
    sim.force_fault(FaultKind.UNPARSEABLE)
    _, _, lines = _stream_lines(sim, _body(sim, questions))
    assert lines[-1] == "data: [DONE]"
    chunks = [json.loads(line.removeprefix("data: ")) for line in lines[:-1]]
    deltas = [c["choices"][0]["delta"] for c in chunks if c.get("choices")]
    assert "".join(d.get("content") or "" for d in deltas) == UNPARSEABLE_TEXT
    assert not any(d.get("tool_calls") for d in deltas)
    assert [c["choices"][0]["finish_reason"] for c in chunks if c.get("choices")][-1] == "stop"
    assert sim.stats()["faults"] == {"unparseable": 1}
    # The same request without the fault is the role's normal reply: a tool call.
    _, _, lines = _stream_lines(sim, _body(sim, questions))
    assert any("tool_calls" in line for line in lines)


def test_malformed_chunk_is_one_undecodable_frame(sim, questions):
    sim.force_fault(FaultKind.MALFORMED_CHUNK)
    _, _, lines = _stream_lines(sim, _body(sim, questions))
    bad = []
    for line in lines[:-1]:
        try:
            json.loads(line.removeprefix("data: "))
        except json.JSONDecodeError:
            bad.append(line)
    assert len(bad) == 1
    assert lines[-1] == "data: [DONE]"


def test_slow_first_byte_trips_a_read_timeout(sim, questions):
    sim.configure_faults(slow_first_byte_s=1.0)
    sim.force_fault(FaultKind.SLOW_FIRST_BYTE)
    with pytest.raises(httpx.ReadTimeout):
        httpx.post(
            f"{sim.base_url}/chat/completions",
            json=_body(sim, questions, False),
            timeout=httpx.Timeout(5.0, read=0.3),
        )
    assert sim.stats()["faults"] == {"slow_first_byte": 1}


def test_forced_fault_can_target_one_role(sim, client, questions):
    sim.force_fault(FaultKind.HTTP_503, roles=(Role.JUDGE,))
    client.chat.completions.create(model=sim.model_name, messages=first_messages(questions[0]), tools=tools())
    with pytest.raises(openai.InternalServerError):
        client.chat.completions.create(
            model=sim.model_name,
            messages=[{"role": "user", "content": "x"}],
            response_format=response_format(Role.JUDGE),
        )
    assert sim.stats()["faults"] == {"http_503": 1}


def _within_binomial(count: int, n: int, p: float, z: float = 4.5) -> bool:
    return abs(count - n * p) <= z * math.sqrt(n * p * (1 - p)) + 1


def test_random_faults_happen_at_their_rates_and_are_seeded(sim, questions):
    rates = {FaultKind.HTTP_503: 0.2, FaultKind.HTTP_429: 0.1, FaultKind.MALFORMED_CHUNK: 0.1}
    sim.configure_faults(rates=rates)
    n = 400
    with httpx.Client(timeout=10) as http:
        statuses = [
            http.post(f"{sim.base_url}/chat/completions", json=_body(sim, questions, False)).status_code
            for _ in range(n)
        ]
    faults = sim.stats()["faults"]
    for kind, rate in rates.items():
        assert _within_binomial(faults.get(kind.value, 0), n, rate), (kind, faults)
    assert statuses.count(503) == faults["http_503"]
    assert statuses.count(429) == faults["http_429"]
    # same seed, same request numbers: the same pattern again
    replay = [sim.state.faults.decide(no, Role.AGENT) for no in range(1, n + 1)]
    assert [s for s in statuses if s != 200] == [
        {"http_503": 503, "http_429": 429}[k.value]
        for k in replay
        if k in (FaultKind.HTTP_503, FaultKind.HTTP_429)
    ]


def test_every_k_and_role_filter(sim, client, questions):
    sim.configure_faults(rates={FaultKind.HTTP_500: 1.0}, every_k=3, roles=(Role.AGENT,))
    outcomes = []
    for _ in range(9):
        try:
            client.chat.completions.create(
                model=sim.model_name, messages=first_messages(questions[0]), tools=tools()
            )
            outcomes.append("ok")
        except openai.InternalServerError:
            outcomes.append("500")
    assert outcomes == ["ok", "ok", "500"] * 3
    client.chat.completions.create(
        model=sim.model_name,
        messages=[{"role": "user", "content": "x"}],
        response_format=response_format(Role.RANK),
    )
    assert sim.stats()["faults"] == {"http_500": 3}


def test_admin_endpoints_force_and_report(sim, questions):
    with httpx.Client(base_url=sim.url, timeout=10) as http:
        assert http.post("/sim/faults/force", json={"kind": "http_502", "count": 2}).status_code == 200
        assert http.post("/sim/faults/force", json={"kind": "nope"}).status_code == 400
        codes = [
            http.post("/v1/chat/completions", json=_body(sim, questions, False)).status_code for _ in range(3)
        ]
        assert codes == [502, 502, 200]
        assert http.get("/sim/stats").json()["faults"] == {"http_502": 2}
        assert http.post("/sim/faults", json={"rates": {"http_500": 2.0}}).status_code == 400
        assert http.post("/sim/faults", json={"rates": {"http_500": 0.5}}).json()["rates"] == {
            "http_500": 0.5
        }
        assert http.delete("/sim/faults").json()["rates"] == {}
        assert http.post("/sim/stats/reset").json()["requests"] == 0
