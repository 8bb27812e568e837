"""The endpoint probe of preflight against a hostile simulator: a hiccup at start-up is retried under
the run's policy (Retry-After honoured); only what is final fails the check at once."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from preflight_support import FAST_RETRY, Bench, config_of, write_config

from net_support import free_port
from skillharness.errors import ConfigError
from skillharness.llm.config import EndpointConfig, LLMConfig, RetryConfig
from skillharness.sim import FaultConfig, FaultKind, SimConfig, SimServer
from skillharness.train.preflight.checks import run_preflight
from skillharness.train.preflight.probes import endpoint_problems

RETRY_AFTER_S = 0.5
pytestmark = pytest.mark.sim_world(
    SimConfig(seed=3, faults=FaultConfig(retry_after_s=RETRY_AFTER_S, cut_after_chunks=1))
)


def _llm(sim: SimServer, **endpoint: object) -> LLMConfig:
    return LLMConfig(
        model=sim.model_name,
        endpoints=(EndpointConfig(base_url=sim.base_url, name="gpu-a", **endpoint),),  # type: ignore[arg-type]
        retry=RetryConfig(**FAST_RETRY),
    )


def test_preflight_passes_on_an_endpoint_that_answers_its_first_probe_with_a_429(
    tmp_path: Path, bench: Bench, sim: SimServer
) -> None:
    sim.force_fault(FaultKind.HTTP_429)
    path = write_config(tmp_path, bench, sim.base_url, sim.model_name, llm={"retry": FAST_RETRY})
    report = run_preflight(config_of(path), endpoint_timeout_s=3.0)
    assert report.ok, report.problems
    assert sim.stats()["faults"] == {"http_429": 1}
    # The probe's retry, then the request check's one request of the run's size.
    assert sim.stats()["statuses"] == {"429": 1, "200": 2}


async def test_the_probe_waits_as_the_429s_retry_after_asks(sim: SimServer) -> None:
    sim.force_fault(FaultKind.HTTP_429)
    started = time.monotonic()
    problems, _ = await endpoint_problems(_llm(sim), 3.0)
    assert problems == []
    # The policy's own backoff is at most 0.05 s here: only the Retry-After makes it this long.
    assert time.monotonic() - started >= RETRY_AFTER_S
    assert sim.stats()["requests"] == 2


@pytest.mark.parametrize(
    "kind",
    [
        FaultKind.HTTP_503,
        FaultKind.TRUNCATE,
        FaultKind.RESET,
        FaultKind.LLAMACPP_ERROR_FRAME,
        FaultKind.TEXT_PLAIN_200,
        FaultKind.HTML_502,
        FaultKind.HTML_504,
    ],
)
async def test_a_transient_first_answer_is_retried_and_the_probe_passes(
    sim: SimServer, kind: FaultKind
) -> None:
    sim.force_fault(kind)
    problems, summary = await endpoint_problems(_llm(sim), 3.0)
    assert problems == []
    assert "1 endpoint(s) answer" in summary
    assert sim.stats()["faults"] == {kind.value: 1}
    assert sim.stats()["requests"] == 2


async def test_a_refused_key_fails_the_probe_at_once(sim: SimServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SH_PREFLIGHT_KEY", "sk-wrong-0123456789")
    sim.force_fault(FaultKind.HTTP_401, count=10)
    [message], _ = await endpoint_problems(_llm(sim, api_key_env="SH_PREFLIGHT_KEY"), 3.0)
    assert message.startswith("endpoint gpu-a does not answer")
    assert "refused the credentials" in message
    assert "SH_PREFLIGHT_KEY" in message
    assert "0123456789" not in message
    assert sim.stats()["requests"] == 1


async def test_a_model_the_listing_lacks_is_left_to_the_model_check(sim: SimServer) -> None:
    """The endpoint answers GET /models; the name it does not list is the model check's to ask
    (test_preflight_unverified.py), so the probe sends no request that would fail a second time."""
    llm = _llm(sim).model_copy(update={"model": "no-such-model"})
    problems, _ = await endpoint_problems(llm, 3.0)
    assert problems == []
    assert sim.stats()["requests"] == 0


async def test_a_refused_connection_fails_the_probe_in_about_a_second() -> None:
    dead = EndpointConfig(base_url=f"http://127.0.0.1:{free_port()}/v1", name="dead-replica")
    llm = LLMConfig(model="m", endpoints=(dead,))  # the default policy: 8 attempts, backoff to 30 s
    started = time.monotonic()
    [message], _ = await endpoint_problems(llm, 3.0)
    assert time.monotonic() - started < 5.0
    assert message.startswith("endpoint dead-replica refuses connections: nothing accepts them at ")
    assert f"{dead.base_url}/models (3 attempts 0.5 s apart)" in message


async def test_a_persistent_text_plain_page_fails_the_probe_naming_its_content_type(sim: SimServer) -> None:
    sim.force_fault(FaultKind.TEXT_PLAIN_200, count=10)
    [message], _ = await endpoint_problems(_llm(sim), 3.0)
    assert message.startswith("endpoint gpu-a does not answer after 3 attempt(s)")
    assert "text/plain" in message
    assert "not an event stream" in message
    assert sim.stats()["requests"] == 3


def test_a_url_without_a_scheme_is_refused_before_any_probe(
    tmp_path: Path, bench: Bench, sim: SimServer
) -> None:
    path = write_config(tmp_path, bench, "127.0.0.1:8000/v1", sim.model_name)
    with pytest.raises(ConfigError) as info:
        config_of(path)
    assert "127.0.0.1:8000/v1" in str(info.value)
    assert "needs a scheme" in str(info.value)
    assert sim.stats()["requests"] == 0
