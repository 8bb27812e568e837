"""A misconfigured server on demand: agent requests over a body size get nginx's 413 page, over an
image count vLLM's 400; other roles and smaller requests pass (docs/simulator.md, "Server limits")."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from sim_support import SIM_TEST_WORLD, make_questions

from skillharness.llm import TOOL_SUBMIT_ANSWER
from skillharness.sim import SimServer

pytestmark = pytest.mark.sim_world(SIM_TEST_WORLD, questions="questions")

# A question the simulator holds: it refuses an agent request about any other (HTTP 404).
_ASKED = make_questions()[0]
_TEXT = f"Question: {_ASKED.question}\nOptions:\n" + "\n".join(_ASKED.options) + "\n"
_TOOLS = [{"type": "function", "function": {"name": TOOL_SUBMIT_ANSWER, "parameters": {"type": "object"}}}]


def _body(images: int, *, agent: bool = True, pad: int = 0) -> dict[str, Any]:
    parts: list[dict[str, Any]] = [{"type": "text", "text": _TEXT + "x" * pad}]
    parts += [{"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,AAAA"}}] * images
    body: dict[str, Any] = {"model": "sim-vl", "messages": [{"role": "user", "content": parts}]}
    if agent:
        body["tools"] = _TOOLS
    return body


def _post(sim: SimServer, body: dict[str, Any]) -> httpx.Response:
    return httpx.post(f"{sim.base_url}/chat/completions", json=body, timeout=10)


def test_an_agent_request_over_the_body_limit_gets_nginx_413_page(sim: SimServer) -> None:
    sim.configure_faults(refuse_body_over=2048)
    small, large = _post(sim, _body(1)), _post(sim, _body(1, pad=4000))
    assert small.status_code == 200
    assert large.status_code == 413
    assert large.headers["content-type"] == "text/html"
    assert "413 Request Entity Too Large" in large.text
    assert sim.stats()["faults"] == {"refused_413": 1}


def test_an_agent_request_over_the_image_limit_gets_vllms_400(sim: SimServer) -> None:
    sim.configure_faults(refuse_images_over=2)
    assert _post(sim, _body(2)).status_code == 200
    refused = _post(sim, _body(3))
    assert refused.status_code == 400
    assert "At most 2 image(s) may be provided in one prompt" in refused.json()["error"]["message"]


def test_other_roles_pass_a_limit_set_for_the_agent(sim: SimServer) -> None:
    """The text-only probe or a judge call passes while every agent request with frames is refused."""
    sim.configure_faults(refuse_body_over=1024, refuse_images_over=0)
    assert _post(sim, _body(3, agent=False, pad=4000)).status_code == 200
    assert _post(sim, _body(3, pad=4000)).status_code == 413
