"""Benchmark: how many calls per second one harness process sustains per CPU core.

Run: ``.venv/bin/python benchmarks/throughput.py [--calls N] [--concurrency C]``. The simulator
serves from a separate process at a small fixed latency (50 ms), so the harness side, not the
server, is what runs out: C concurrent callers (default 128) push calls through the full LLM stack
(accounting → cache → retry → router → breaker → client). Reported per variant: wall calls/s,
the client process's CPU ms per call (``time.process_time``) and so the calls/s one core sustains
(1000 / CPU ms). docs/scale.md turns that into how many replicas one process can drive.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing as mp
import tempfile
import time
from pathlib import Path

from llm_client import _serve  # the simulator in its own process, as in the client benchmark
from skillharness.llm import build_chat_model
from skillharness.llm.config import CacheConfig, EndpointConfig, LLMConfig
from skillharness.llm.roles import Role, response_format
from skillharness.llm.types import ChatRequest

LATENCY_S = 0.05
CONCURRENCY = 128
CALLS = 3000


async def _run(base_url: str, cache: CacheConfig | None, calls: int, concurrency: int) -> tuple[float, float]:
    """(wall s, CPU s) of ``calls`` distinct calls after a warm-up round."""
    config = LLMConfig(
        model="sim-vl", endpoints=(EndpointConfig(base_url=base_url, max_in_flight=concurrency),)
    )
    async with build_chat_model(config, cache) as model:

        async def worker(first: int, step: int, stop: int) -> None:
            for i in range(first, stop, step):
                request = ChatRequest(
                    model="sim-vl",
                    messages=({"role": "user", "content": f"call {i}"},),
                    role=Role.JUDGE,
                    response_format=response_format(Role.JUDGE),
                )
                await model.complete(request)

        await asyncio.gather(*(worker(w, concurrency, concurrency * 2) for w in range(concurrency)))
        base = concurrency * 2
        cpu0, wall0 = time.process_time(), time.perf_counter()
        await asyncio.gather(*(worker(base + w, concurrency, base + calls) for w in range(concurrency)))
        return time.perf_counter() - wall0, time.process_time() - cpu0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=CALLS)
    parser.add_argument("--concurrency", type=int, default=CONCURRENCY)
    args = parser.parse_args()
    ctx = mp.get_context("spawn")
    ports, stop = ctx.Queue(), ctx.Event()
    server = ctx.Process(target=_serve, args=(LATENCY_S, ports, stop), daemon=True)
    server.start()
    try:
        base_url = ports.get(timeout=60)
        with tempfile.TemporaryDirectory() as tmp:
            variants = {
                "no cache": None,
                "sqlite cache, all misses": CacheConfig(url=f"sqlite:///{Path(tmp) / 'bench.sqlite'}"),
            }
            print(f"latency {LATENCY_S * 1000:.0f} ms, concurrency {args.concurrency}, {args.calls} calls")
            print("| variant | wall calls/s | client CPU ms/call | calls/s per core |")
            print("|---|---|---|---|")
            for label, cache in variants.items():
                wall, cpu = asyncio.run(_run(base_url, cache, args.calls, args.concurrency))
                ms = 1000 * cpu / args.calls
                print(f"| {label} | {args.calls / wall:.0f} | {ms:.2f} | {1000 / ms:.0f} |")
    finally:
        stop.set()
        server.join(timeout=10)


if __name__ == "__main__":
    main()
