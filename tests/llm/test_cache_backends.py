"""Both cache backends behind one interface: round trip, TTL, corrupt entries, namespaces."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
import subprocess
import time

import pytest
import redis.asyncio as aioredis
from llm_support import make_request

from skillharness.errors import CacheError, ConfigError
from skillharness.llm.cache.backend import CacheBackend, redact_url
from skillharness.llm.cache.entry import decode_entry, encode_entry
from skillharness.llm.cache.key import cache_key
from skillharness.llm.cache.model import CachedModel
from skillharness.llm.cache.opener import open_backend
from skillharness.llm.types import ChatRequest, ChatResponse, ToolCall, Usage


class Counting:
    """The cached model's collaborator: answers a fixed response and counts calls."""

    def __init__(self, response: ChatResponse) -> None:
        self.response = response
        self.calls = 0

    async def complete(self, request: ChatRequest) -> ChatResponse:
        self.calls += 1
        return self.response


RESPONSE = ChatResponse(
    content=None,
    tool_calls=(ToolCall(id="c1", name="submit_answer", arguments='{"answer": "B"}'),),
    finish_reason="tool_calls",
    usage=Usage(prompt_tokens=5, completion_tokens=2),
    model="m",
    latency_s=0.3,
    endpoint="e",
)


async def test_round_trip_and_hit(backend: CacheBackend) -> None:
    inner = Counting(RESPONSE)
    cached = CachedModel(inner, backend, salt="s", ttl_s=None)
    first = await cached.complete(make_request())
    second = await cached.complete(make_request())
    assert inner.calls == 1
    assert not first.cache_hit
    assert second.cache_hit
    assert second.tool_calls == RESPONSE.tool_calls
    assert second.usage == RESPONSE.usage
    assert (cached.counters.hits, cached.counters.misses, cached.counters.stores) == (1, 1, 1)
    # A different salt is a different entry.
    other = CachedModel(inner, backend, salt="t", ttl_s=None)
    await other.complete(make_request())
    assert inner.calls == 2


async def test_finish_reason_length_is_returned_but_not_stored(backend: CacheBackend) -> None:
    inner = Counting(
        RESPONSE.model_copy(update={"finish_reason": "length", "tool_calls": (), "content": "cut"})
    )
    cached = CachedModel(inner, backend, salt=None, ttl_s=None)
    for _ in range(2):
        assert (await cached.complete(make_request())).content == "cut"
    assert inner.calls == 2
    assert cached.counters.not_stored == 2
    assert (await backend.stats()).entries == 0


async def test_ttl_expires_entries(backend: CacheBackend) -> None:
    inner = Counting(RESPONSE)
    cached = CachedModel(inner, backend, salt=None, ttl_s=0.3)
    await cached.complete(make_request())
    await cached.complete(make_request())
    assert inner.calls == 1
    await asyncio.sleep(0.45)
    await cached.complete(make_request())
    assert inner.calls == 2


@pytest.mark.parametrize(
    "raw",
    [
        b"\x80\x81 not json",
        b"[1, 2]",
        b'{"format": "skillharness.cache.entry/0", "key": "k"}',
        b'{"format": "skillharness.cache.entry/1", "key": "KEY", "created_at": 0, "expires_at": null,'
        b' "response": {"content": "x", "tool_calls": [], "finish_reason": "length",'
        b' "usage": {}, "model": ""}}',
        b"\x80\x04\x95pickle",
    ],
    ids=["garbage", "list", "old-version", "length-entry", "pickle"],
)
async def test_corrupt_or_foreign_entry_is_a_counted_deleted_miss(backend: CacheBackend, raw: bytes) -> None:
    request = make_request()
    key = cache_key(request, None)
    await backend.put(key, raw.replace(b"KEY", key.encode()), None)
    inner = Counting(RESPONSE)
    cached = CachedModel(inner, backend, salt=None, ttl_s=None)
    response = await cached.complete(request)
    assert not response.cache_hit
    assert inner.calls == 1
    assert cached.counters.corrupt == 1
    # The bad value was replaced by a valid one.
    stored = await backend.get(key)
    assert stored is not None
    assert decode_entry(stored, key, time.time()) is not None


async def test_entry_for_another_key_is_a_miss(backend: CacheBackend) -> None:
    request = make_request()
    key = cache_key(request, None)
    await backend.put(key, encode_entry("someone-else", RESPONSE, time.time(), None), None)
    cached = CachedModel(Counting(RESPONSE), backend, salt=None, ttl_s=None)
    assert not (await cached.complete(request)).cache_hit
    assert cached.counters.corrupt == 1


async def test_stats_prune_clear(backend: CacheBackend) -> None:
    await backend.put("a", b"x" * 10, None)
    await backend.put("b", b"y" * 5, 0.05)
    await asyncio.sleep(0.1)
    stats = await backend.stats()
    assert stats.bytes in (10, 15)
    assert stats.entries in (1, 2)
    await backend.prune()
    assert (await backend.stats()).entries == 1
    assert await backend.clear() == 1
    assert (await backend.stats()).entries == 0


def test_a_cache_path_that_is_a_folder_is_named_as_one(tmp_path) -> None:
    with pytest.raises(CacheError, match="it is a folder; name a file inside it") as caught:
        open_backend(f"sqlite:///{tmp_path}", "ns")
    assert caught.value.context["file"] == str(tmp_path)


def test_a_cache_in_a_folder_the_user_cannot_write_names_the_folder(tmp_path, monkeypatch) -> None:
    # The tests run as root, for whom every folder is writable; the permission check is the
    # collaborator replaced here, SQLite's own failure is what the message adds to.
    from skillharness.llm.cache import sqlite as module

    monkeypatch.setattr(module.os, "access", lambda path, mode: False)
    assert f"the folder {tmp_path} is not writable" in module._why_unwritable(tmp_path / "c.sqlite")
    (tmp_path / "c.sqlite").write_bytes(b"")
    assert "the file is read-only" in module._why_unwritable(tmp_path / "c.sqlite")


def test_a_sqlite_database_that_is_not_a_cache_is_refused_and_left_alone(tmp_path) -> None:
    store = tmp_path / "runs.sqlite"
    with contextlib.closing(sqlite3.connect(store)) as conn:
        conn.executescript("CREATE TABLE runs (id TEXT); CREATE TABLE predictions (id TEXT);")
    with pytest.raises(CacheError, match="but not a response cache") as caught:
        open_backend(f"sqlite:///{store}", "ns")
    assert f"{store} is a SQLite database" in str(caught.value)
    assert "it holds tables: predictions, runs" in str(caught.value)
    assert caught.value.context["file"] == str(store)
    with contextlib.closing(sqlite3.connect(store)) as conn:
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
    assert tables == {"runs", "predictions"}


async def test_a_new_or_empty_sqlite_file_becomes_a_cache(tmp_path) -> None:
    (tmp_path / "empty.sqlite").write_bytes(b"")
    for name in ("empty.sqlite", "new.sqlite"):
        backend = open_backend(f"sqlite:///{tmp_path / name}", "ns")
        await backend.put("k", b"1", None)
        await backend.aclose()
        again = open_backend(f"sqlite:///{tmp_path / name}", "ns")  # now a cache: opened again
        assert await again.get("k") == b"1"
        await again.aclose()


async def test_sqlite_namespaces_are_separate(tmp_path) -> None:
    url = f"sqlite:///{tmp_path / 'c.sqlite'}"
    ours, theirs = open_backend(url, "ours"), open_backend(url, "theirs")
    await ours.put("k", b"1", None)
    await theirs.put("k", b"2", None)
    assert await ours.clear() == 1
    assert await theirs.get("k") == b"2"
    await ours.aclose()
    await theirs.aclose()


async def test_redis_clear_removes_only_our_namespace(redis_url: str) -> None:
    client = aioredis.from_url(redis_url)
    await client.set("someone:else", b"keep")
    await client.set("shtestx:cache:k", b"keep too")  # a prefix of ours must not match
    store = open_backend(redis_url, "shtest")
    await store.put("k1", b"v", None)
    await store.put("k2", b"v", 60)
    assert (await store.stats()).entries == 2
    assert 0 < await client.pttl("shtest:cache:k2") <= 60_000
    assert await client.pttl("shtest:cache:k1") == -1  # 'never' really means no expiry
    assert await store.clear() == 2
    assert await client.get("someone:else") == b"keep"
    assert await client.get("shtestx:cache:k") == b"keep too"
    await client.delete("someone:else", "shtestx:cache:k")
    await client.aclose()
    await store.aclose()


def test_unknown_url_scheme_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match=r"cache\.url"):
        open_backend("memcached://x", "ns")


def test_entry_is_plain_versioned_json() -> None:
    raw = encode_entry("k", RESPONSE, 1.0, None)
    data = json.loads(raw)
    assert data["format"] == "skillharness.cache.entry/1"
    assert set(data["response"]) == {"content", "tool_calls", "finish_reason", "usage", "model"}


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("redis://:s3cret@cache:6379/0", "redis://***@cache:6379/0"),
        ("redis://bob:s3cret@cache:6379/0", "redis://bob:***@cache:6379/0"),
        # An unescaped "@" in the password: the host is after the LAST "@", as redis-py parses it.
        ("redis://bob:s3@cret@cache:6379/0", "redis://bob:***@cache:6379/0"),
        ("redis://cache:6379/0?password=s3cret&db=1", "redis://cache:6379/0?password=***&db=1"),
        ("rediss://cache:6379", "rediss://cache:6379"),
    ],
)
def test_redacted_url_never_shows_the_password(url: str, shown: str) -> None:
    assert redact_url(url) == shown
    assert "s3" not in redact_url(url)


async def test_redis_outage_mid_run_is_a_cache_error_not_an_answer(
    private_redis: tuple[subprocess.Popen[bytes], str],
) -> None:
    # The server stops between two calls: the later calls must fail loudly, never answer.
    proc, url = private_redis
    store = open_backend(url, "shtest")
    inner = Counting(RESPONSE)
    model = CachedModel(inner, store, salt=None, ttl_s=None)
    try:
        assert (await model.complete(make_request("a"))).tool_calls == RESPONSE.tool_calls
        proc.terminate()
        await asyncio.to_thread(proc.wait, 10)
        for text in ("a", "b"):  # a stored answer and a fresh one: neither may come back silently
            with pytest.raises(CacheError, match="redis cache"):
                await model.complete(make_request(text))
        assert inner.calls == 1
    finally:
        await store.aclose()
