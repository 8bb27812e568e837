"""``skillharness sim serve`` runs as a process and streams tool calls; ``sim oracle`` and ``sim config``."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sim_support import first_messages, make_questions, tools

CLI = [sys.executable, "-m", "skillharness.cli"]


@pytest.fixture
def questions_file(tmp_path: Path) -> Path:
    path = tmp_path / "questions.json"
    path.write_text(json.dumps([q.model_dump() for q in make_questions(3)]), encoding="utf-8")
    return path


@pytest.mark.slow
def test_sim_serve_streams_tool_calls(tmp_path: Path, questions_file: Path):
    from openai import OpenAI

    world = tmp_path / "world.yaml"
    world.write_text(
        subprocess.run(
            [*CLI, "sim", "config", "--seed", "5"], check=True, capture_output=True, text=True
        ).stdout,
        encoding="utf-8",
    )
    proc = subprocess.Popen(
        [*CLI, "sim", "serve", "--port", "0", "--world", str(world), "--questions", str(questions_file)],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        banner = ""
        deadline = time.monotonic() + 30
        while "/v1" not in banner and time.monotonic() < deadline:
            banner += proc.stderr.readline()
        assert "SIMULATOR" in banner
        assert "seed=5" in banner
        assert "questions=12" in banner
        base_url = re.search(r"(http://\S+/v1)", banner).group(1)
        question = make_questions(3)[0]
        with OpenAI(base_url=base_url, api_key="sim", max_retries=0, timeout=20) as client:
            stream = client.chat.completions.create(
                model="sim-vl", messages=first_messages(question), tools=tools(), stream=True
            )
            names = [
                c.function.name
                for chunk in stream
                for ch in chunk.choices
                for c in ch.delta.tool_calls or []
                if c.function and c.function.name
            ]
        assert names == ["get_frames"]
    finally:
        proc.terminate()
        proc.wait(timeout=15)


def test_sim_oracle_prints_json(questions_file: Path):
    out = subprocess.run(
        [*CLI, "sim", "oracle", "--questions", str(questions_file), "--seed", "1", "--json"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    result = json.loads(out)
    assert result["simulator"] is True
    assert result["n"] == 12
    assert 0 < result["accuracy"] < 1
    # The scored truth loses the answers that do not parse; the intended-letter accuracy does not.
    assert result["accuracy"] < result["intended_accuracy"]


def test_bad_world_file_is_a_clear_user_error(tmp_path: Path):
    world = tmp_path / "world.yaml"
    world.write_text("faults:\n  rates:\n    truncate: 3\n", encoding="utf-8")
    done = subprocess.run([*CLI, "sim", "config", "--world", str(world)], capture_output=True, text=True)
    assert done.returncode == 2
    assert "world.yaml" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_world_that_is_a_folder_is_named_as_one(tmp_path: Path):
    done = subprocess.run([*CLI, "sim", "config", "--world", str(tmp_path)], capture_output=True, text=True)
    assert done.returncode == 2
    assert f"--world {tmp_path} is a folder" in " ".join(done.stderr.split())
    assert "not found" not in done.stderr
