"""Issue 32 item 3: a run's outages are on the record. Failed attempts (by error class and replica)
and breaker transitions (with their times) are stored per run, the stored usage counts the failed
attempts, and the report's cost section shows them as a timeline beside the calls."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import yaml
from loop_support import loop_config, train_once

from bench_support import Bench
from skillharness.config import load_config
from skillharness.eval.report.build import build_report
from skillharness.sim import SimServer, decisive_world
from skillharness.store import LLMEventRow, RunMetric, RunReader

pytestmark = pytest.mark.slow


def _with_llm(config: Path, **llm: object) -> None:

    doc = yaml.safe_load(config.read_text())
    doc["llm"].update(llm)
    config.write_text(yaml.safe_dump(doc))


async def test_issue_32_3_failed_attempts_and_breaker_transitions_are_stored_and_reported(
    train_bench: Bench, experiment: Path, tmp_path: Path
) -> None:
    world = decisive_world(5, insight_rate=0.0, harmful_rate=0.0)
    with SimServer(world, questions=train_bench.questions) as sim:
        config = loop_config(experiment, train_bench, sim, epochs=1)
        _with_llm(
            config,
            retry={"base_delay_s": 0.01, "max_delay_s": 0.02},
            breaker={"failure_threshold": 1, "cooldown_s": 0.05},
        )
        sim.configure_faults(rates={"http_503": 0.1})
        await train_once(config, "t-outage")
        injected = sim.stats()["faults"].get("http_503", 0)
    store = load_config(config).store
    with RunReader(store) as reader:
        events = reader.ledger(LLMEventRow, run_id="t-outage")
        usage = {m.name: m.value for m in reader.ledger(RunMetric, run_id="t-outage")}["usage"]
    attempts = [e for e in events if e.event == "attempt"]
    breakers = [e for e in events if e.event == "breaker"]
    assert injected > 0
    assert len(attempts) == injected, "every injected fault is one stored failed attempt"
    assert {(e.kind, e.endpoint) for e in attempts} == {("http_503", sim.base_url)}
    assert ("closed", "open") in {(e.detail, e.kind) for e in breakers}
    assert all(e.at.startswith("20") and "T" in e.at for e in events), "each event has its time"
    assert sum(role["errors"] for role in usage.values()) == injected, "usage shows the outage"
    files = await asyncio.to_thread(build_report, store.url, "t-outage", tmp_path / "report.html")
    page = await asyncio.to_thread(files.html.read_text)
    assert 'id="outage-timeline"' in page
    assert "breaker closed → open" in page
    assert "http_503 retried ×" in page
