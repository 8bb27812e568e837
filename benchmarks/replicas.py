"""How long losing one of two replicas stalls progress (issue 32, item 2; target <= 1 s).

Two simulator servers run as child processes (``skillharness sim serve``) with a simulated
latency, so calls are really in flight when one is killed (SIGKILL). ``--workers`` callers ask
without pause through one LLM stack with the default retry and breaker settings. The stall is the
longest gap between two consecutive completed calls after the kill (before it, the gaps are a
fraction of the latency). Each case kills the first-listed replica in one run and the second in
another, with the agent's per-draw affinity keys and without them.

Run: ``.venv/bin/python benchmarks/replicas.py [--latency 0.3] [--workers 16] [--before 3] [--after 5]``
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import yaml

from skillharness.llm import build_chat_model
from skillharness.llm.config import EndpointConfig, LLMConfig
from skillharness.llm.roles import Role
from skillharness.llm.types import ChatRequest


def start_sim(workdir: Path, name: str, latency_s: float) -> tuple[subprocess.Popen[bytes], str]:
    world = workdir / f"{name}.yaml"
    world.write_text(yaml.safe_dump({"seed": 0, "latency": {"ttft_s": latency_s}}))
    log_path = workdir / f"{name}.log"
    exe = Path(sys.executable).parent / "skillharness"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [str(exe), "sim", "serve", "--port", "0", "--world", str(world)],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        found = re.search(r"at (http://[\d.]+:\d+/v1)", log_path.read_text(errors="replace"))
        if found:
            try:
                if httpx.get(found.group(1).removesuffix("/v1") + "/health", timeout=1).is_success:
                    return process, found.group(1)
            except httpx.TransportError:
                pass
        if process.poll() is not None:
            raise RuntimeError(log_path.read_text(errors="replace"))
        time.sleep(0.1)
    raise RuntimeError("the simulator did not start within 60 s")


async def one_case(urls: list[str], victim: int, kill, args: argparse.Namespace, affinity: bool) -> dict:
    config = LLMConfig(
        model="sim-vl",
        endpoints=tuple(EndpointConfig(base_url=u, name=f"replica-{i}") for i, u in enumerate(urls)),
    )
    done: list[float] = []
    failed = 0
    stop = asyncio.Event()
    counter = iter(range(10**9))

    async with build_chat_model(config) as stack:

        async def worker() -> None:
            nonlocal failed
            while not stop.is_set():
                i = next(counter)
                request = ChatRequest(
                    model="sim-vl",
                    messages=({"role": "user", "content": f"call {i}"},),
                    role=Role.JUDGE,
                    affinity=f"draw-{i}" if affinity else None,
                )
                try:
                    await stack.complete(request)
                    done.append(time.monotonic())
                except Exception:
                    failed += 1

        tasks = [asyncio.create_task(worker()) for _ in range(args.workers)]
        await asyncio.sleep(args.before)
        killed_at = time.monotonic()
        kill(victim)
        await asyncio.sleep(args.after)
        stop.set()
        await asyncio.gather(*tasks)
        events = stack.events.drain()
    before = [b - a for a, b in itertools.pairwise(done) if b <= killed_at]
    after_times = [killed_at, *[t for t in done if t > killed_at]]
    stall = max(b - a for a, b in itertools.pairwise(after_times))
    return {
        "killed": f"replica-{victim}",
        "affinity": affinity,
        "calls": len(done),
        "failed_calls": failed,
        "longest_gap_before_s": round(max(before), 3),
        "stall_after_kill_s": round(stall, 3),
        "failed_attempts": sum(1 for e in events if hasattr(e, "outcome")),
        "breaker_transitions": sum(1 for e in events if hasattr(e, "after")),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.3, help="simulated time to first token (s)")
    parser.add_argument("--workers", type=int, default=16)
    parser.add_argument("--before", type=float, default=3.0, help="seconds of calls before the kill")
    parser.add_argument("--after", type=float, default=5.0, help="seconds of calls after the kill")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for affinity in (False, True):
            for victim in (0, 1):
                sims = [start_sim(Path(tmp), f"sim-{victim}-{i}-{affinity}", args.latency) for i in range(2)]

                def kill(index: int, sims=sims) -> None:
                    sims[index][0].send_signal(signal.SIGKILL)

                try:
                    rows.append(asyncio.run(one_case([u for _, u in sims], victim, kill, args, affinity)))
                finally:
                    for process, _ in sims:
                        process.kill()
                        process.wait()
                print(rows[-1], flush=True)
    print(f"\nlatency {args.latency}s, {args.workers} workers")
    print("stall = the longest gap between two completions after the kill")
    print("| killed | affinity | calls | failed calls | longest gap before (s) | stall after kill (s) |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['killed']} | {r['affinity']} | {r['calls']} | {r['failed_calls']} | "
            f"{r['longest_gap_before_s']} | {r['stall_after_kill_s']} |"
        )


if __name__ == "__main__":
    main()
