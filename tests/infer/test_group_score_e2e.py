"""``infer --protocol lmms_eval`` on a questions file in Video-MME-v2's layout, against the
simulator over loopback: lmms-eval's ``videomme_v2`` request, and its group score
(``videomme_v2_overall_score``) printed beside its per-question accuracy, equal to what a
re-typed copy of upstream's aggregation gives for the same stored replies."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml
from infer_support import Bench, experiment_doc

from bench_support import StartSim, v2_questions_file
from cli_support import run_cli as cli
from skillharness.agent import lmms_eval_task
from skillharness.data import load_adapter, load_benchmark
from skillharness.infer.scoring import Parser, score_run
from skillharness.sim import LatencyConfig, SimConfig
from upstream_oracles import videomme_v2_overall_score

WORLD = SimConfig(seed=3, latency=LatencyConfig(ttft_s=0.0, per_token_s=0.0, jitter_s=0.0))


@pytest.mark.slow
def test_infer_prints_videomme_v2s_group_score(tmp_path: Path, bench: Bench, sim_factory: StartSim) -> None:
    questions_path = v2_questions_file(bench, tmp_path / "test.parquet")
    questions = load_benchmark(questions_path, load_adapter("videomme_v2")).questions
    sim = sim_factory(WORLD, questions)
    doc = experiment_doc(tmp_path, bench, model=sim.model_name, base_url=sim.base_url, subtitles=False)
    doc["data"] = {
        "questions": str(questions_path),
        "videos_dir": str(bench.root / "videos"),
        "benchmark": "videomme_v2",
    }
    config = tmp_path / "exp.yaml"
    config.write_text(yaml.safe_dump(doc))
    args = ["--config", str(config), "--protocol", "lmms_eval", "--pool", "all", "--run-id", "v2-1"]
    done = cli("infer", *args, env={**os.environ, "COLUMNS": "200"})
    assert done.returncode == 0, done.stderr

    scores = score_run(f"sqlite:///{tmp_path / 'runs.sqlite'}", "v2-1", questions, benchmark="videomme_v2")
    task = lmms_eval_task("videomme_v2")
    assert task is not None
    upstream = [
        {
            "video_id": a.question.video_id,
            "question_id": a.question.question_id,
            "group_type": a.question.group_type,
            "group_structure": a.question.group_structure,
            "score": int(task.read(a.scored_text(Parser.LMMS_EVAL), a.question) == a.question.answer),
        }
        for a in scores.answers
    ]
    expected = videomme_v2_overall_score(upstream)
    accuracy = scores.overall(Parser.LMMS_EVAL)
    assert 0 < accuracy.correct < len(questions), "the world answers some right and some wrong"
    assert scores.overall(Parser.OURS).infra_errors == 0

    title = "lmms-eval videomme_v2: videomme_v2_overall_score (rule group_score)"
    assert title in done.stdout
    table = done.stdout.split(title, 1)[1].splitlines()
    all_row = next(line for line in table if line.strip("│┃ ").startswith("all"))
    cells = [c.strip() for c in all_row.strip("│┃ ").split("│")]
    assert cells[:2] == ["all", "3"]  # three groups
    assert cells[2].startswith(f"{expected:.1f} (")
    assert cells[3].startswith(f"{100 * accuracy.accuracy:.1f} (")  # the accuracy beside it
