"""Diagnosis against the simulator and a real store: audit items P0-2, P1-5, P2-3 and P2-4."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest
import yaml
from diagnose_support import (
    AGENT,
    NO_RETRY_LLM,
    SAMPLES,
    diagnose_world,
    garble_judge_replies,
    record_requests,
    rollout,
    user_text,
)
from train_support import train_context, write_train_config

from bench_support import Bench
from skillharness.errors import ExcludedShareError
from skillharness.llm.roles import Role
from skillharness.sim import FaultKind, SimServer
from skillharness.skills import Bundle
from skillharness.store import DiagnosisRow, RunReader
from skillharness.train.config import TrainConfig
from skillharness.train.diagnose.casepack import build_case_packs
from skillharness.train.diagnose.diagnoser import JUDGED, diagnose
from skillharness.train.diagnose.trace_summary import summarize_trace
from skillharness.train.state.context import TrainContext
from skillharness.train.state.records import Cause

pytestmark = pytest.mark.sim_world(diagnose_world(3))

TESTS = Path(__file__).resolve().parents[1]


def _config(tmp_path: Path, bench: Bench, sim: SimServer, **train: object) -> Path:
    return write_train_config(tmp_path, bench, sim, llm=NO_RETRY_LLM, agent=AGENT, train={"seed": 5, **train})


async def test_p0_2_judge_sees_the_trace(tmp_path: Path, bench: Bench, sim: SimServer) -> None:
    path = _config(tmp_path, bench, sim)
    async with train_context(path) as ctx:
        bundle = Bundle.load(bench.bundle)
        run_id, predictions = await rollout(ctx, bundle)
        log = record_requests(sim)
        report = await diagnose(ctx, bundle, run_id, predictions)
    judged = [d for d in report.diagnoses if d.cause in JUDGED]
    assert judged
    assert report.judge_calls == len(judged)
    prompts = [user_text(body) for body in log.of(Role.JUDGE)]
    assert len(prompts) == len(judged)
    with RunReader(f"sqlite:///{tmp_path / 'runs.sqlite'}") as reader:
        for d in judged:
            p = d.case.prediction
            summary = summarize_trace(reader.trace(run_id, p.question_id, p.sample_idx))
            assert "get_frames(" in summary  # the simulated agent always inspects frames first
            holding = [text for text in prompts if summary in text]
            assert len(holding) == 1, f"no judge prompt (or several) holds the trace of {p.key}"
            assert f"question {p.question_id})" in holding[0]
            assert "data:image" not in holding[0]  # text only


def _truncate_videos(videos: Path, names: set[str]) -> None:
    for name in names:
        file = videos / name
        data = file.read_bytes()
        file.write_bytes(data[: len(data) * 6 // 10])  # index intact (faststart), the last pictures gone


async def test_p1_5_failed_and_degraded_diagnoses_never_reach_the_skill_body(
    tmp_path: Path, bench: Bench, sim: SimServer
) -> None:
    path = _config(tmp_path, bench, sim, diagnosis={"max_excluded_share": 1.0})
    async with train_context(path) as probe:
        chosen = probe.train_questions[:: max(1, len(probe.train_questions) // 2)]
        damaged = {q.video_id for q in chosen}
        files = {probe.session.sources.video_path(q).name for q in chosen}
    videos = tmp_path / "videos"
    shutil.copytree(bench.root / "videos", videos)
    doc = yaml.safe_load(path.read_text())
    doc["data"]["videos_dir"] = str(videos)
    path.write_text(yaml.safe_dump(doc))
    sim.force_fault(FaultKind.HTTP_503, count=3, roles=(Role.JUDGE,))
    async with train_context(path) as ctx:
        # Cut short after the start-up check passed (a file damaged during the run): the start-up
        # check refuses a cut file, so degraded frames can only come from one damaged later.
        _truncate_videos(videos, files)
        bundle = Bundle.load(bench.bundle)
        run_id, predictions = await rollout(ctx, bundle)
        report = await diagnose(ctx, bundle, run_id, predictions)
        counts = report.counts
        assert counts["judge_failed"] == 3
        assert counts["degraded"] >= 1
        assert counts["defect"] >= 1
        assert counts["wrong"] == sum(p.correct is not True for p in predictions)
        assert sum(counts[c.value] for c in Cause) == counts["wrong"]
        for d in report.diagnoses:
            if d.cause in (Cause.DEGRADED, Cause.JUDGE_FAILED):
                assert d.target is None
            if d.case.question.video_id in damaged and d.cause is Cause.DEGRADED:
                assert any(step.degraded for step in d.case.trace)
        excluded = {d.case.prediction.key for d in report.diagnoses if d.cause.excluded}
        packs = build_case_packs(report.diagnoses, max_cases=100, seed=0, salt="s")
        skill_packs = [p for p in packs if p.target.kind == "skill"]
        assert skill_packs
        for pack in skill_packs:
            assert all(d.cause is Cause.DEFECT for d in pack.cases)
            assert not {d.case.prediction.key for d in pack.cases} & excluded
        # Past the share the step fails, with the counts.
        strict = ctx.config.model_copy(
            update={"diagnosis": ctx.config.diagnosis.model_copy(update={"max_excluded_share": 0.0})}
        )
        sim.force_fault(FaultKind.HTTP_503, count=1000, roles=(Role.JUDGE,))
        with pytest.raises(ExcludedShareError) as info:
            await diagnose(_with_config(ctx, strict), bundle, run_id, predictions)
        assert info.value.context["counts"]["judge_failed"] == 3  # the retryable three, failing again
        assert info.value.context["counts"]["degraded"] == counts["degraded"]
        assert info.value.context["share"] > 0.0
        sim.clear_faults()


def _with_config(ctx: TrainContext, config: TrainConfig) -> TrainContext:
    return replace(ctx, config=config)


_KILLED_PASS = textwrap.dedent(
    """
    import asyncio, json, os, signal, sys
    from pathlib import Path
    sys.path[:0] = [{tests!r}, {train!r}]
    from train_support import train_context
    from skillharness.skills import Bundle
    from skillharness.train.diagnose.diagnoser import run_waterfall

    async def main():
        async with train_context(Path({config!r})) as ctx:
            predictions = list(ctx.store.final_predictions({run!r}).values())
            report = await run_waterfall(ctx, Bundle.load({bundle!r}), {run!r}, predictions)
            print(json.dumps(report.counts), flush=True)
            os.kill(os.getpid(), signal.SIGKILL)  # no clean close of anything

    asyncio.run(main())
    """
)


@pytest.mark.slow
async def test_p2_4_transient_judge_failure_is_retried_on_resume(
    tmp_path: Path, bench: Bench, sim: SimServer
) -> None:
    path = _config(tmp_path, bench, sim, diagnosis={"max_excluded_share": 1.0})
    async with train_context(path) as ctx:
        run_id, _ = await rollout(ctx, Bundle.load(bench.bundle))
    sim.force_fault(FaultKind.HTTP_503, count=1, roles=(Role.JUDGE,))
    script = _KILLED_PASS.format(
        tests=str(TESTS), train=str(TESTS / "train"), config=str(path), run=run_id, bundle=str(bench.bundle)
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("SKILLHARNESS_")}
    done = await asyncio.to_thread(
        subprocess.run, [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == -9, done.stderr[-2000:]
    first = json.loads(done.stdout.strip().splitlines()[-1])
    assert first["judge_failed"] == 1
    assert sim.stats()["faults"].get("http_503") == 1
    with RunReader(f"sqlite:///{tmp_path / 'runs.sqlite'}") as reader:
        retryable = [row for row in reader.ledger(DiagnosisRow, run_id=run_id) if row.retryable]
    assert len(retryable) == 1
    failed = retryable[0]

    sim.reset_stats()
    async with train_context(path) as ctx:
        predictions = list(ctx.store.final_predictions(run_id).values())
        report = await diagnose(ctx, Bundle.load(bench.bundle), run_id, predictions)
        rows = ctx.store.select(DiagnosisRow, run_id=run_id)
    assert report.judge_calls == 1
    assert sim.stats()["roles"].get("judge") == 1
    assert report.fingerprint_hits == first["defect"] + first["lapse"] + first["uncertain"]
    assert report.counts["judge_failed"] == 0
    same = [r for r in rows if (r.question_id, r.sample_idx) == (failed.question_id, failed.sample_idx)]
    assert len(same) == 1
    assert not same[0].retryable
    assert same[0].cause in {c.value for c in JUDGED}
    assert same[0].fingerprint == failed.fingerprint


async def test_p2_3_diagnoses_upsert_without_duplicates(tmp_path: Path, bench: Bench, sim: SimServer) -> None:
    path = _config(tmp_path, bench, sim)
    async with train_context(path) as ctx:
        bundle = Bundle.load(bench.bundle)
        run_id, predictions = await rollout(ctx, bundle)
        first = await diagnose(ctx, bundle, run_id, predictions)
        rows_once = ctx.store.select(DiagnosisRow, run_id=run_id)
        second = await diagnose(ctx, bundle, run_id, predictions)
        rows_twice = ctx.store.select(DiagnosisRow, run_id=run_id)
    stored = [d for d in first.diagnoses if d.cause is not Cause.INFRA]
    assert len(rows_once) == len(stored) > 0
    assert rows_twice == rows_once  # same fingerprints, same verdicts: replaced, never added
    keys = [(r.question_id, r.sample_idx) for r in rows_twice]
    assert len(keys) == len(set(keys))
    assert second.judge_calls == 0
    assert second.fingerprint_hits == first.judge_calls
    assert [d.cause for d in second.diagnoses] == [d.cause for d in first.diagnoses]
    assert [d.target for d in second.diagnoses] == [d.target for d in first.diagnoses]
    assert len(first.diagnoses) == sum(1 for p in predictions if p.correct is not True)
    assert SAMPLES > 1


async def test_an_unparseable_judge_reply_is_asked_again_not_replayed_from_the_cache(
    tmp_path: Path, bench: Bench, sim: SimServer
) -> None:
    path = _config(tmp_path, bench, sim, diagnosis={"max_excluded_share": 1.0})
    async with train_context(path) as ctx:
        bundle = Bundle.load(bench.bundle)
        run_id, predictions = await rollout(ctx, bundle)
        garble_judge_replies(sim, 1)
        first = await diagnose(ctx, bundle, run_id, predictions)
        assert first.counts["judge_failed"] == 1
        failed = next(d for d in first.diagnoses if d.cause is Cause.JUDGE_FAILED)
        assert "unusable reply" in failed.reason
        sim.reset_stats()
        second = await diagnose(ctx, bundle, run_id, predictions)
    assert second.judge_calls == 1
    assert sim.stats()["roles"].get("judge") == 1  # asked the model, not the response cache
    assert second.counts["judge_failed"] == 0
