"""infer's start-up probe under hostile answers: a hiccup is retried, only what is final stops the run.

A real loopback server (``PageServer``) answers the probe's ``GET /models`` with each page a busy
server or a gateway sends; the simulator's gateway faults cover the questions that follow.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
import yaml
from infer_support import PACED_WORLD, Bench, write_config

from net_support import Page, PageServer, free_port
from skillharness.config import load_config
from skillharness.errors import AuthError, ConfigError, FatalLLMError
from skillharness.infer import load_job, run_inference
from skillharness.infer.endpoints import probe_endpoints
from skillharness.llm.config import EndpointConfig, LLMConfig, RetryConfig, TimeoutConfig
from skillharness.llm.roles import Role
from skillharness.sim import FaultKind, SimServer
from skillharness.store import RunReader

pytestmark = pytest.mark.sim_world(PACED_WORLD)

FAST = RetryConfig(max_attempts=4, base_delay_s=0.01, max_delay_s=0.05)
HTML_502 = b"<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>"
HTML_504 = b"<html><head><title>504 Gateway Time-out</title></head><body>nginx</body></html>"


def _llm(base_url: str, **endpoint: object) -> LLMConfig:
    return LLMConfig(
        model="m",
        endpoints=(EndpointConfig(base_url=base_url, name="gpu-a", **endpoint),),  # type: ignore[arg-type]
        retry=FAST,
        timeouts=TimeoutConfig(probe_s=2.0),
    )


@pytest.mark.parametrize(
    "first",
    [
        Page(429, b'{"error": {"message": "rate limited"}}', headers=(("retry-after", "0.4"),)),
        Page(503, b'{"error": {"message": "loading model"}}'),
        Page(cut=True),
        Page(502, HTML_502, "text/html"),
        Page(504, HTML_504, "text/html"),
    ],
    ids=["429-retry-after", "503", "cut-body", "html-502", "html-504"],
)
async def test_a_probe_that_first_meets_a_transient_answer_retries_and_starts(first: Page) -> None:
    with PageServer() as server:
        server.push(first)
        started = time.monotonic()
        await probe_endpoints(_llm(server.base_url))
        elapsed = time.monotonic() - started
        assert server.requests == 2
    if first.status == 429:
        assert elapsed >= 0.4, "the probe waited as its Retry-After asked"


async def test_a_text_plain_200_on_the_probe_is_a_live_server() -> None:
    with PageServer() as server:
        server.push(Page(200, b"upstream connect error", "text/plain"))
        await probe_endpoints(_llm(server.base_url))
        assert server.requests == 1


async def test_a_refused_key_stops_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SH_PROBE_KEY", "sk-wrong")
    with PageServer() as server:
        server.default = Page(401, b'{"error": {"message": "invalid key"}}')
        with pytest.raises(AuthError) as info:
            await probe_endpoints(_llm(server.base_url, api_key_env="SH_PROBE_KEY"))
        assert server.requests == 1, "a refused key is final: no retry"
    assert "gpu-a" in str(info.value)
    assert "SH_PROBE_KEY" in str(info.value)


async def test_a_refused_connection_stops_the_run_in_about_a_second() -> None:
    """Nothing listens on the port: 3 quick attempts, not the whole retry policy (about 40 s with
    the defaults), and the error names the URL."""
    dead = f"http://127.0.0.1:{free_port()}/v1"
    llm = _llm(dead).model_copy(update={"retry": RetryConfig()})  # the default policy
    started = time.monotonic()
    with pytest.raises(FatalLLMError) as info:
        await probe_endpoints(llm)
    assert time.monotonic() - started < 5.0
    message = str(info.value)
    assert message.startswith("endpoint gpu-a refuses connections")
    assert f"nothing accepts them at {dead}/models" in message
    assert info.value.context["kind"] == "connection_refused"


def test_infer_stops_before_any_question_on_a_model_the_server_does_not_serve(
    tmp_path: Path, bench: Bench, sim: SimServer
) -> None:
    """A wrong name used to send every question and score 100 % infra errors."""
    path = _config(tmp_path, bench, sim)
    doc = yaml.safe_load(path.read_text())
    doc["llm"]["model"] = "sim-v1"  # a typo
    path.write_text(yaml.safe_dump(doc))
    config = load_config(path)
    with pytest.raises(ConfigError) as info:
        asyncio.run(run_inference(load_job(config, pool="val", run_id="typo", resume=False)))
    message = str(info.value)
    assert "model 'sim-v1' (llm.model) is not served" in message
    assert "it lists 'sim-vl'" in message
    assert info.value.context["field"] == "llm.model"
    assert sim.stats()["requests"] == 1, "asked by name once; no question was sent"
    assert "agent" not in sim.stats()["roles"]


async def test_a_persistent_gateway_page_stops_the_run_after_the_retries() -> None:
    with PageServer() as server:
        server.default = Page(502, HTML_502, "text/html")
        with pytest.raises(FatalLLMError) as info:
            await probe_endpoints(_llm(server.base_url))
        assert server.requests == FAST.max_attempts
    message = str(info.value)
    assert "gpu-a" in message
    assert "HTTP 502" in message
    assert "502 Bad Gateway" in message


async def test_every_endpoint_is_probed_at_once_and_the_dead_one_is_named() -> None:
    dead = f"http://127.0.0.1:{free_port()}/v1"
    with PageServer() as server:
        server.push(Page(503, b"busy"))
        llm = _llm(server.base_url).model_copy(
            update={
                "endpoints": (
                    EndpointConfig(base_url=server.base_url, name="live"),
                    EndpointConfig(base_url=dead, name="dead"),
                )
            }
        )
        with pytest.raises(FatalLLMError) as info:
            await probe_endpoints(llm)
        assert server.requests == 2, "the live endpoint's 503 was retried, and it answered"
    assert info.value.context["endpoint"] == "dead"


def _config(tmp_path: Path, bench: Bench, sim: SimServer, concurrency: int = 2) -> Path:
    path = write_config(tmp_path / "exp.yaml", bench, sim, concurrency=concurrency)
    doc = yaml.safe_load(path.read_text())
    doc["llm"]["endpoints"][0]["name"] = "gpu-a"
    # 4 attempts: more than the 3 pages forced below, even if one question meets all of them.
    doc["llm"]["retry"] = {"max_attempts": 4, "base_delay_s": 0.01, "max_delay_s": 0.05}
    doc["llm"]["breaker"] = {"failure_threshold": 1000}
    path.write_text(yaml.safe_dump(doc))
    return path


@pytest.mark.slow
def test_gateway_pages_on_the_first_questions_cost_no_question(
    tmp_path: Path, bench: Bench, sim: SimServer
) -> None:
    config = load_config(_config(tmp_path, bench, sim))
    for kind in (FaultKind.TEXT_PLAIN_200, FaultKind.HTML_502, FaultKind.HTML_504):
        sim.force_fault(kind, roles=(Role.AGENT,))
    result = asyncio.run(run_inference(load_job(config, pool="val", run_id="pages", resume=False)))
    assert result.status_counts.get("infra_error", 0) == 0
    assert sim.stats()["faults"] == {"text_plain_200": 1, "html_502": 1, "html_504": 1}


@pytest.mark.slow
def test_a_persistent_text_plain_page_is_an_infra_error_naming_the_content_type(
    tmp_path: Path, bench: Bench, sim: SimServer
) -> None:
    config = load_config(_config(tmp_path, bench, sim, concurrency=1))
    sim.force_fault(FaultKind.TEXT_PLAIN_200, count=4, roles=(Role.AGENT,))  # one question's 4 attempts
    asyncio.run(run_inference(load_job(config, pool="val", run_id="plain", resume=False)))
    reader = RunReader(config.store)
    try:
        failed = [p for p in reader.predictions("plain") if p.status.value == "infra_error"]
    finally:
        reader.close()
    [prediction] = failed
    message = prediction.error_message or ""
    assert prediction.error_class == "TransientLLMError"
    assert "gpu-a" in message
    assert "text/plain" in message
    assert "not an event stream" in message
