"""End to end against a real model server: llama.cpp with a small text model, `vision: false`."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import yaml
from infer_support import Bench

from llama_support import LlamaServer, llama_experiment
from skillharness.config import load_config
from skillharness.infer import load_job, run_inference
from skillharness.store import PredictionStatus, RunReader

# A real model on two shared cores: its start-up alone can take minutes under load.
pytestmark = [pytest.mark.contract, pytest.mark.slow, pytest.mark.timeout(900)]


def test_text_only_run_against_llama_cpp_writes_well_formed_rows(
    tmp_path: Path, bench: Bench, llama: LlamaServer
) -> None:
    doc = llama_experiment(
        tmp_path, bench, llama, max_steps=3, sampling={"temperature": 0.0, "max_tokens": 96}
    )
    path = tmp_path / "exp.yaml"
    path.write_text(yaml.safe_dump(doc))
    job = load_job(load_config(path), pool="val", run_id="llama-1", resume=False)
    job = type(job)(**{**job.__dict__, "questions": job.questions[:4]})
    result = asyncio.run(run_inference(job))
    assert result.asked == 4
    reader = RunReader(f"sqlite:///{tmp_path / 'runs.sqlite'}")
    try:
        rows = reader.predictions("llama-1")
        assert len(rows) == 4
        letters = {"A", "B", "C", "D"}
        for row in rows:
            assert row.status in (PredictionStatus.OK, PredictionStatus.PARSE_ERROR), (
                row.status,
                row.error_message,
            )
            if row.status is PredictionStatus.OK:
                assert row.answer in letters
            else:
                assert row.answer is None
                assert row.error_class
            assert row.prompt_tokens > 0
            trace = reader.trace("llama-1", row.question_id)
            assert trace, "every question has its trace"
            assert all(not step.frames_shown for step in trace), "vision: false shows no frames"
    finally:
        reader.close()
