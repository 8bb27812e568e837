"""``infer`` under each frame transport against the simulator over loopback HTTP: every question is
answered, each request has its transport's shape, and the answers are the images run's (the
simulator sees the same frames). lmms-eval's ``pass_video_url`` runs end to end too, and a clip
window under ``video_url`` is refused before anything is asked."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import yaml
from infer_support import Bench

from bench_support import experiment_doc
from skillharness.config import Config, load_config
from skillharness.data.loader import load_questions
from skillharness.errors import ConfigError
from skillharness.infer import load_job, open_session, run_inference
from skillharness.sim import LatencyConfig, SimConfig, SimServer
from skillharness.skills import initial_bundle
from skillharness.store import RunKind, RunLog, RunProvenance, RunReader
from skillharness.video import locate_video

pytestmark = pytest.mark.sim_world(
    SimConfig(seed=3, record_requests=True, latency=LatencyConfig(ttft_s=0.0, per_token_s=0.0, jitter_s=0.0))
)


def _config(folder: Path, bench: Bench, sim: SimServer, transport: str, **agent: Any) -> Config:
    folder.mkdir()
    doc = experiment_doc(folder, bench, model=sim.model_name, base_url=sim.base_url, concurrency=4, **agent)
    doc["llm"]["endpoints"][0]["media"] = {"transport": transport}
    (folder / "exp.yaml").write_text(yaml.safe_dump(doc))
    return load_config(folder / "exp.yaml")


def _run(config: Config, run_id: str, sim: SimServer) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    sim.state.recorded.clear()
    result = asyncio.run(run_inference(load_job(config, pool="val", run_id=run_id, resume=False)))
    assert result.status_counts["infra_error"] == 0, result.status_counts
    with RunReader(config.store) as reader:
        answers = {p.question_id: (p.status.value, p.answer) for p in reader.predictions(run_id)}
    return answers, list(sim.state.recorded)


def _first_parts(body: dict[str, Any]) -> list[str]:
    user = next(m for m in body["messages"] if m["role"] == "user")
    return [part["type"] for part in user["content"]]


def test_each_transport_answers_like_images(tmp_path: Path, bench: Bench, sim: SimServer) -> None:
    runs = {
        transport: _run(_config(tmp_path / transport, bench, sim, transport), transport, sim)
        for transport in ("images", "video_frames", "video_url")
    }
    answers = {transport: answered for transport, (answered, _) in runs.items()}
    assert len(answers["images"]) == 12
    assert answers["video_frames"] == answers["images"]
    assert answers["video_url"] == answers["images"]
    first = {t: [b for b in bodies if len(b["messages"]) == 2] for t, (_, bodies) in runs.items()}
    assert all(len(bodies) == 12 for bodies in first.values())
    for body in first["images"]:
        assert _first_parts(body) == ["text"] + ["text", "image_url"] * 8
        assert "media_io_kwargs" not in body
    for body in first["video_frames"]:
        assert _first_parts(body) == ["text", "text", "video_url"]
        video = body["media_io_kwargs"]["video"]
        assert video["num_frames"] == -1
        frames = body["messages"][1]["content"][2]["video_url"]["url"].count(",")  # one after the header
        assert len(video["frames_indices"]) == 8 == frames
    questions = {q.question_id: q for q in load_questions(bench.questions)}
    for body in first["video_url"]:
        assert _first_parts(body) == ["text", "video_url"]
        assert body["media_io_kwargs"] == {"video": {"num_frames": 8}}
        url = body["messages"][1]["content"][1]["video_url"]["url"]
        text = body["messages"][1]["content"][0]["text"]
        asked = [q for q in questions.values() if "\n".join([q.question, "Options:", *q.options]) in text]
        assert url in {locate_video(bench.root / "videos", q.videoID).absolute().as_uri() for q in asked}


def test_lmms_eval_pass_video_url_end_to_end(tmp_path: Path, bench: Bench, sim: SimServer) -> None:
    images, _ = _run(_config(tmp_path / "images", bench, sim, "images", protocol="lmms_eval"), "i", sim)
    by_url, bodies = _run(_config(tmp_path / "url", bench, sim, "video_url", protocol="lmms_eval"), "u", sim)
    assert by_url == images  # the same text and ten frames: the simulator answers alike
    for body in bodies:
        (message,) = body["messages"]
        video, text = message["content"]
        assert video["video_url"]["url"].startswith(f"file://{bench.root / 'videos'}/")
        assert text["type"] == "text"
        assert body["media_io_kwargs"] == {"video": {"num_frames": 10}}
        assert (body["max_tokens"], body["temperature"]) == (16, 0.0)


def test_a_clip_under_video_url_is_refused_before_anything_is_asked(
    tmp_path: Path, bench: Bench, sim: SimServer
) -> None:
    config = _config(tmp_path / "url", bench, sim, "video_url")
    questions = load_questions(bench.questions)
    clip = questions[1].model_copy(update={"clip_start": 1.0, "clip_end": 3.0})

    async def ask() -> None:
        async with open_session(
            data=config.data,
            agent=config.agent,
            llm=config.llm,
            cache=config.cache,
            store=config.store,
            salt="s",
        ) as session:
            provenance = RunProvenance(
                run_id="clip",
                kind=RunKind.INFER,
                config_hash="c",
                bundle_hash="b",
                model=sim.model_name,
                endpoints=(sim.base_url,),
                sampling=config.agent.sampling,
            )
            async with await RunLog.open(config.store.url, provenance) as log:
                await session.rollout(initial_bundle(), [(questions[0], 0), (clip, 0)], log)

    with pytest.raises(ConfigError, match=rf"{clip.question_id} \(clip \[1s, 3s\] of {clip.videoID}\)"):
        asyncio.run(ask())
    assert sim.state.recorded == []  # not even the question without a clip was asked
