"""A cache that cannot be written (a full store) never costs an answer."""

from __future__ import annotations

import logging
import subprocess

import pytest
import redis
from llm_support import Reply, ScriptedServer, fast_llm_config, make_request, ok_frames

from skillharness.llm import build_chat_model
from skillharness.llm.cache.model import WRITE_FAILURES_TO_DISABLE
from skillharness.llm.config import CacheConfig


async def test_a_failed_cache_write_keeps_the_answer_warns_once_and_then_stops_writing(
    scripted: ScriptedServer,
    private_redis: tuple[subprocess.Popen[bytes], str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    _, url = private_redis
    # A real full store: redis refuses every write once its memory limit is reached (noeviction).
    admin = redis.Redis.from_url(url)
    admin.config_set("maxmemory-policy", "noeviction")
    admin.config_set("maxmemory", "1")
    admin.close()
    caplog.set_level(logging.WARNING, logger="skillharness.llm.cache.model")
    calls = WRITE_FAILURES_TO_DISABLE + 3
    scripted.push(*[Reply(frames=ok_frames(f"answer {i}")) for i in range(calls)])
    async with build_chat_model(fast_llm_config(scripted.base_url), CacheConfig(url=url)) as model:
        answers = [(await model.complete(make_request(f"q{i}"))).content for i in range(calls)]
        counters = model.cache.counters if model.cache is not None else None
    assert answers == [f"answer {i}" for i in range(calls)], "every paid-for response was returned"
    assert counters is not None
    assert counters.write_failures == WRITE_FAILURES_TO_DISABLE, "no write is tried once writes are off"
    assert counters.writes_disabled
    assert counters.stores == 0
    messages = [r.getMessage() for r in caplog.records]
    assert sum("cache write failed" in m for m in messages) == 1
    assert sum("cache writes disabled" in m for m in messages) == 1
