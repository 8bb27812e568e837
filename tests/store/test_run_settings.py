"""A run's settings are stored with it, and a refused resume names each setting that changed."""

from __future__ import annotations

import pytest
from store_support import provenance

from skillharness.errors import StoreError
from skillharness.eval.report.collect import collect_report
from skillharness.eval.report.render import render_html
from skillharness.store import RunKind, RunLog, RunMetric, RunReader, content_hash

TRAIN = RunKind.TRAIN  # the report reads training runs

SETTINGS = {"agent.samples": 1, "agent.vision": True, "llm.model": "sim-vl", "data.questions": "sha256:ab"}


def _hashed(settings: dict[str, object]) -> str:
    return content_hash(settings)


@pytest.fixture
async def stored(store_url: str) -> str:
    """``store_url`` holding run-1, opened once with ``SETTINGS`` and closed."""
    await (await RunLog.open(store_url, provenance(config_hash=_hashed(SETTINGS)), settings=SETTINGS)).close()
    return store_url


async def _refused_resume(store_url: str, settings: dict[str, object], **changes: object) -> StoreError:
    """The error refusing a resume of run-1 with ``settings`` (and other provenance ``changes``)."""
    with pytest.raises(StoreError) as info:
        await RunLog.open(
            store_url, provenance(config_hash=_hashed(settings), **changes), resume=True, settings=settings
        )
    return info.value


async def test_the_settings_are_stored_with_a_new_run(stored: str) -> None:
    with RunReader(stored) as reader:
        rows = reader.ledger(RunMetric, run_id="run-1", name="settings")
    assert [row.value for row in rows] == [SETTINGS]


async def test_a_refused_resume_names_each_changed_setting_with_both_values(stored: str) -> None:
    changed = {**SETTINGS, "agent.samples": 3, "agent.vision": False, "agent.max_steps": 2}
    changed.pop("llm.model")
    refused = await _refused_resume(stored, changed)
    message = str(refused)
    assert "its provenance differs in 4 setting(s)" in message
    assert "agent.samples: stored 1, now 3" in message
    assert "agent.vision: stored true, now false" in message
    assert "agent.max_steps: stored (not set), now 2" in message
    assert 'llm.model: stored "sim-vl", now (not set)' in message
    assert "config_hash" not in message, "the settings explain the hash; the two hashes say nothing"
    assert "data.questions" not in message, "an unchanged setting is not named"
    assert refused.context["settings"] == ["agent.max_steps", "agent.samples", "agent.vision", "llm.model"]


async def test_other_provenance_changes_are_named_beside_the_settings(stored: str) -> None:
    message = str(await _refused_resume(stored, {**SETTINGS, "agent.samples": 2}, bundle_hash="x" * 64))
    assert "agent.samples: stored 1, now 2" in message
    assert "bundle_hash: stored 'bbbb" in message


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


REPLICA_A, REPLICA_B = "http://10.0.0.1:8000/v1", "http://10.0.0.2:8000/v1"


def _replica_settings(*urls: str) -> dict[str, object]:
    """Settings as a run created before replicas were interchangeable stored them (URLs counted)."""
    per_replica: dict[str, object] = {}
    for i, url in enumerate(urls):
        per_replica |= {f"llm.endpoints.{i}.base_url": url, f"llm.endpoints.{i}.send_sample_idx": True}
    return {**SETTINGS, **per_replica}


def _replica_changes(store_url: str) -> list[dict[str, object]]:
    with RunReader(store_url) as reader:
        rows = reader.ledger(RunMetric, run_id="run-1", name="replica_changes")
    return rows[0].value if rows else []


@pytest.mark.parametrize(
    ("before", "after"), [((REPLICA_A, REPLICA_B), (REPLICA_A,)), ((REPLICA_A,), (REPLICA_A, REPLICA_B))]
)
async def test_issue_32_1_a_resume_on_fewer_or_more_replicas_is_accepted_and_recorded(
    store_url: str, before: tuple[str, ...], after: tuple[str, ...]
) -> None:
    first = _replica_settings(*before)
    started = provenance(config_hash=_hashed(first), endpoints=before, kind=TRAIN)
    await (await RunLog.open(store_url, started, settings=first)).close()
    again = _replica_settings(*after)
    resumed = provenance(config_hash=_hashed(again), endpoints=after, kind=TRAIN)
    await (await RunLog.open(store_url, resumed, resume=True, settings=again)).close()
    [change] = _replica_changes(store_url)
    assert (change["before"], change["now"]) == (list(before), list(after))
    with RunReader(store_url) as reader:  # the report prints it beside the endpoints
        page = render_html(collect_report(reader, "run-1"))
    assert f'replicas changed</td><td class="mono">{change["at"]}: {", ".join(after)}' in page
    assert change["added"] == sorted(set(after) - set(before))
    assert change["removed"] == sorted(set(before) - set(after))
    with RunReader(store_url) as reader:
        assert reader.run("run-1").provenance.endpoints == before, "the provenance stays as first written"
    # Resumed again on the same replicas: nothing more to record.
    await (await RunLog.open(store_url, resumed, resume=True, settings=again)).close()
    assert len(_replica_changes(store_url)) == 1


async def test_issue_32_1_a_resume_with_another_model_is_still_refused(store_url: str) -> None:
    first = _replica_settings(REPLICA_A, REPLICA_B)
    await (
        await RunLog.open(
            store_url,
            provenance(config_hash=_hashed(first), endpoints=(REPLICA_A, REPLICA_B)),
            settings=first,
        )
    ).close()
    other = {**_replica_settings(REPLICA_A), "llm.model": "other-vl"}
    with pytest.raises(StoreError, match="differs in 2 setting") as info:
        await RunLog.open(
            store_url,
            provenance(config_hash=_hashed(other), endpoints=(REPLICA_A,), model="other-vl"),
            resume=True,
            settings=other,
        )
    assert 'llm.model: stored "sim-vl", now "other-vl"' in str(info.value)
    assert "base_url" not in str(info.value)
    assert _replica_changes(store_url) == []


async def test_issue_32_1_the_refusal_counts_every_difference_it_lists(stored: str) -> None:
    changed = {**SETTINGS, "agent.samples": 2, "agent.vision": False, "agent.max_steps": 3}
    message = str(await _refused_resume(stored, changed, bundle_hash="x" * 64))
    listed = message.split("setting(s): ", 1)[1].split("; start a new run id")[0].split("; ")
    assert len(listed) == 4
    assert "differs in 4 setting(s)" in message
