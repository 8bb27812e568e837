"""``infer --protocol lmms_eval`` against the simulator: the requests are lmms-eval's, byte for
byte; the report shows four scores with per-domain and per-sub-category tables; the official
export, read by a re-typed copy of the linked official script's logic, gives our "official"
number."""

from __future__ import annotations

import base64
import io
import json
import os
from pathlib import Path

import pytest
from infer_support import Bench, write_config
from PIL import Image

from cli_support import run_cli as cli
from skillharness.agent.protocols.frames import qwen_vl_indices
from skillharness.agent.protocols.prompts import lmms_eval_text
from skillharness.agent.protocols.subtitles import lmms_eval_subtitles
from skillharness.data.loader import load_questions
from skillharness.data.questions import Question
from skillharness.infer.scoring import Parser, score_run
from skillharness.sim import LatencyConfig, SimConfig, SimServer
from skillharness.video import frame_layout, locate_subtitles, locate_video
from upstream_oracles import lmms_eval_overall, official_read

# The simulator keeps every request body it answers, so a test can read what the agent sent.
pytestmark = pytest.mark.sim_world(
    SimConfig(seed=3, record_requests=True, latency=LatencyConfig(ttft_s=0.0, per_token_s=0.0, jitter_s=0.0))
)


def _expected_text(bench: Bench, question: Question) -> str:
    video = locate_video(bench.root / "videos", question.videoID)
    layout = frame_layout(video)
    subtitles = lmms_eval_subtitles(
        locate_subtitles(bench.root / "subtitles", question.videoID),
        fps=layout.fps,
        total_frames=layout.total_frames,
    )
    return lmms_eval_text(question, subtitles)


@pytest.mark.slow
def test_infer_under_lmms_eval_protocol(tmp_path: Path, bench: Bench, sim: SimServer) -> None:
    config = write_config(tmp_path / "exp.yaml", bench, sim)
    export = tmp_path / "official.json"
    args = ["--config", str(config), "--protocol", "lmms_eval", "--pool", "all", "--run-id", "ref-1"]
    wide = {**os.environ, "COLUMNS": "220"}  # table headers on one line
    done = cli("infer", *args, "--export-official", str(export), env=wide)
    assert done.returncode == 0, done.stderr
    questions = load_questions(bench.questions)
    by_text = {_expected_text(bench, q): q for q in questions}

    bodies = sim.state.recorded
    assert len(bodies) == len(questions)
    for body in bodies:
        assert "tools" not in body
        assert "tool_choice" not in body
        assert (body["max_tokens"], body["temperature"]) == (16, 0.0)
        (message,) = body["messages"]  # one turn, no system message
        assert message["role"] == "user"
        *images, text = message["content"]  # v0.7.2's chat wrapper: the frames, then the text
        question = by_text[text["text"]]  # byte for byte the text lmms-eval renders
        layout = frame_layout(locate_video(bench.root / "videos", question.videoID))
        assert len(images) == len(qwen_vl_indices(layout.total_frames, 10))
        first = images[0]["image_url"]["url"]
        assert first.startswith("data:image/png;base64,")
        png = Image.open(io.BytesIO(base64.b64decode(first.split(",", 1)[1])))
        assert png.format == "PNG"

    out = done.stdout
    for needle in (
        "Per domain",
        "Per sub-category",
        "Per task type",
        "Per duration",
        "ours %",
        "lmms-eval %",
    ):
        assert needle in out
    assert "official %" in out
    assert "vlmevalkit %" in out
    assert "protocol lmms_eval" in out

    scores = score_run(f"sqlite:///{tmp_path / 'runs.sqlite'}", "ref-1", questions)
    results = json.loads(export.read_text())
    assert sum(len(v["questions"]) for v in results) == len(questions)
    durations = sorted({q.duration for q in questions})
    correct, answered = official_read(results, durations, skip_missing=True)
    official = scores.overall(Parser.OFFICIAL)
    assert (official.correct, official.n) == (correct, answered)
    assert official.dropped == len(questions) - answered
    assert scores.overall(Parser.LMMS_EVAL).n == len(questions)  # everything stays in its denominator
    # The number lmms-eval v0.7.2's aggregation prints for the same replies (sample 0 each).
    rows = [(q["response"], q["answer"]) for video in results for q in video["questions"]]
    assert 100 * scores.overall(Parser.LMMS_EVAL).accuracy == pytest.approx(lmms_eval_overall(rows))

    # The protocol is part of the run's config hash: resuming under another one is refused.
    other = cli(
        "infer",
        "--config",
        str(config),
        "--protocol",
        "official",
        "--pool",
        "all",
        "--run-id",
        "ref-1",
        "--resume",
    )
    assert other.returncode != 0
    assert "config" in other.stderr.lower()


@pytest.mark.slow
def test_infer_refuses_to_export_over_a_file_it_did_not_write_before_it_runs(
    tmp_path: Path, bench: Bench, sim: SimServer
) -> None:
    config = write_config(tmp_path / "exp.yaml", bench, sim)
    before, asked = bench.questions.read_bytes(), len(sim.state.recorded)
    args = ["--config", str(config), "--pool", "all", "--run-id", "ref-2"]
    refused = cli("infer", *args, "--export-official", str(bench.questions))
    assert refused.returncode == 2
    assert f"--export-official {bench.questions}: exists and is not an earlier output" in refused.stderr
    assert "--force" not in refused.stderr  # infer has no --force to suggest
    assert "Traceback" not in refused.stderr
    assert bench.questions.read_bytes() == before
    empty = tmp_path / "mine.json"
    empty.write_text("[]")  # an empty list is not an earlier export
    refused_empty = cli("infer", *args, "--export-official", str(empty))
    assert refused_empty.returncode == 2
    assert f"--export-official {empty}: exists and is not an earlier output" in refused_empty.stderr
    assert empty.read_text() == "[]"
    assert len(sim.state.recorded) == asked  # refused before any question was asked
