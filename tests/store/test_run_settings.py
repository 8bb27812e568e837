"""A run's settings are stored with it, and a refused resume names each setting that changed."""

from __future__ import annotations

import pytest
from store_support import provenance

from skillharness.errors import StoreError
from skillharness.store import RunLog, RunMetric, RunReader, content_hash

SETTINGS = {"agent.samples": 1, "agent.vision": True, "llm.model": "sim-vl", "data.questions": "sha256:ab"}


def _hashed(settings: dict[str, object]) -> str:
    return content_hash(settings)


async def test_the_settings_are_stored_with_a_new_run(store_url: str) -> None:
    await (await RunLog.open(store_url, provenance(config_hash=_hashed(SETTINGS)), settings=SETTINGS)).close()
    with RunReader(store_url) as reader:
        stored = reader.ledger(RunMetric, run_id="run-1", name="settings")
    assert [row.value for row in stored] == [SETTINGS]


async def test_a_refused_resume_names_each_changed_setting_with_both_values(store_url: str) -> None:
    await (await RunLog.open(store_url, provenance(config_hash=_hashed(SETTINGS)), settings=SETTINGS)).close()
    changed = {**SETTINGS, "agent.samples": 3, "agent.vision": False, "agent.max_steps": 2}
    changed.pop("llm.model")
    with pytest.raises(StoreError) as info:
        await RunLog.open(store_url, provenance(config_hash=_hashed(changed)), resume=True, settings=changed)
    message = str(info.value)
    assert "its provenance differs in 4 setting(s)" in message
    assert "agent.samples: stored 1, now 3" in message
    assert "agent.vision: stored true, now false" in message
    assert "agent.max_steps: stored (not set), now 2" in message
    assert 'llm.model: stored "sim-vl", now (not set)' in message
    assert "config_hash" not in message, "the settings explain the hash; the two hashes say nothing"
    assert "data.questions" not in message, "an unchanged setting is not named"
    assert info.value.context["settings"] == ["agent.max_steps", "agent.samples", "agent.vision", "llm.model"]


async def test_other_provenance_changes_are_named_beside_the_settings(store_url: str) -> None:
    await (await RunLog.open(store_url, provenance(config_hash=_hashed(SETTINGS)), settings=SETTINGS)).close()
    changed = {**SETTINGS, "agent.samples": 2}
    with pytest.raises(StoreError) as info:
        await RunLog.open(
            store_url,
            provenance(config_hash=_hashed(changed), bundle_hash="x" * 64),
            resume=True,
            settings=changed,
        )
    assert "agent.samples: stored 1, now 2" in str(info.value)
    assert "bundle_hash: stored 'bbbb" in str(info.value)


async def test_a_run_stored_without_settings_says_why_it_cannot_name_them(store_url: str) -> None:
    await (await RunLog.open(store_url, provenance())).close()
    with pytest.raises(StoreError, match="predates stored settings") as info:
        await RunLog.open(store_url, provenance(config_hash="d" * 64), resume=True, settings=SETTINGS)
    assert "config_hash: stored 'cccc" in str(info.value)


async def test_an_accepted_resume_of_an_older_run_stores_its_settings(store_url: str) -> None:
    await (await RunLog.open(store_url, provenance())).close()
    await (await RunLog.open(store_url, provenance(), resume=True, settings=SETTINGS)).close()
    with RunReader(store_url) as reader:
        assert [row.value for row in reader.ledger(RunMetric, run_id="run-1")] == [SETTINGS]
