"""``infer --protocol P --bundle-slot auto`` against the simulator: each recorded request differs
from the plain run's only in the slot docs/protocols.md names; a protocol without one is refused
before anything is asked."""

from __future__ import annotations

import pytest
from infer_support import Bench, write_config

from cli_support import run_cli as cli
from skillharness.agent.protocols.prompts import LMMS_EVAL_POST_PROMPT
from skillharness.sim import LatencyConfig, SimConfig, SimServer

pytestmark = pytest.mark.sim_world(
    SimConfig(seed=3, record_requests=True, latency=LatencyConfig(ttft_s=0.0, per_token_s=0.0, jitter_s=0.0))
)


def _bodies(sim: SimServer, bench: Bench, tmp_path, protocol: str, slot: str) -> dict[str, dict]:
    """The run's request bodies by their question and options (requests run concurrently, so their
    order is not the questions')."""
    sim.state.recorded.clear()
    config = write_config(tmp_path / f"{protocol}-{slot}.yaml", bench, sim, subtitles=False)
    run = ["--config", str(config), "--protocol", protocol, "--pool", "all", "--bundle-slot", slot]
    done = cli("infer", *run, "--run-id", f"{protocol}-{slot}", "--no-vision")
    assert done.returncode == 0, done.stderr
    bodies = {_key(body): body for body in sim.state.recorded}
    assert len(bodies) == len(sim.state.recorded), "two requests share a key: the pairing would guess"
    return bodies


_OPTION_STARTS = tuple(f"{c}{mark} " for c in "ABCDEFGH" for mark in ".)")


def _key(body: dict) -> str:
    """The question line and its option lines: options alone repeat across questions ("A. 2 …")."""
    user = next(m for m in body["messages"] if m["role"] == "user")
    lines = [line for part in user["content"] if part["type"] == "text" for line in part["text"].split("\n")]
    first = next(i for i, line in enumerate(lines) if line.startswith(("A. ", "A) ")))
    options = [line for line in lines[first:] if line.startswith(_OPTION_STARTS)]
    return "\n".join([lines[first - 1], *options])


@pytest.mark.slow
def test_infer_with_the_bundle_in_each_protocols_slot(tmp_path, bench: Bench, sim: SimServer) -> None:
    # lmms-eval: only the user text changes, and only at its end (the post_prompt).
    plain = _bodies(sim, bench, tmp_path, "lmms_eval", "none")
    placed = _bodies(sim, bench, tmp_path, "lmms_eval", "auto")
    assert plain.keys() == placed.keys()
    assert plain
    for key, body in placed.items():
        before = plain[key]["messages"][0]["content"][-1]["text"]
        after = body["messages"][0]["content"][-1]["text"]
        assert before.endswith(LMMS_EVAL_POST_PROMPT)
        assert after.endswith(LMMS_EVAL_POST_PROMPT)
        head = before.removesuffix(LMMS_EVAL_POST_PROMPT)
        assert after.startswith(head + "\n")
        assert len(after) > len(before)
        body["messages"][0]["content"][-1]["text"] = before
        assert body == plain[key]
    # VLMEvalKit: one system message before the unchanged user message.
    plain = _bodies(sim, bench, tmp_path, "vlmevalkit", "none")
    placed = _bodies(sim, bench, tmp_path, "vlmevalkit", "auto")
    for key, body in placed.items():
        system, *rest = body["messages"]
        assert system["role"] == "system"
        assert system["content"].strip()
        assert {**body, "messages": rest} == plain[key]


@pytest.mark.slow
def test_infer_refuses_a_slot_the_protocol_lacks(tmp_path, bench: Bench, sim: SimServer) -> None:
    config = write_config(tmp_path / "exp.yaml", bench, sim, subtitles=False)
    done = cli("infer", "--config", str(config), "--protocol", "official", "--bundle-slot", "auto")
    assert done.returncode != 0
    assert "agent.protocol official has no slot for a bundle's text" in done.stderr
    assert "agent.protocol_bundle_slot: none" in done.stderr
    assert sim.state.recorded == []  # refused before any request
