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
import tempfile
from pathlib import Path

from sim_calls import sim_server, timed_calls
from skillharness.llm.config import CacheConfig

LATENCY_S = 0.05
CONCURRENCY = 128
CALLS = 3000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=CALLS)
    parser.add_argument("--concurrency", type=int, default=CONCURRENCY)
    args = parser.parse_args()
    with sim_server(LATENCY_S) as base_url, tempfile.TemporaryDirectory() as tmp:
        variants = {
            "no cache": None,
            "sqlite cache, all misses": CacheConfig(url=f"sqlite:///{Path(tmp) / 'bench.sqlite'}"),
        }
        print(f"latency {LATENCY_S * 1000:.0f} ms, concurrency {args.concurrency}, {args.calls} calls")
        print("| variant | wall calls/s | client CPU ms/call | calls/s per core |")
        print("|---|---|---|---|")
        for label, cache in variants.items():
            run = timed_calls(
                base_url, cache, calls=args.calls, concurrency=args.concurrency, warmup=2 * args.concurrency
            )
            wall, cpu = asyncio.run(run)
            ms = 1000 * cpu / args.calls
            print(f"| {label} | {args.calls / wall:.0f} | {ms:.2f} | {1000 / ms:.0f} |")


if __name__ == "__main__":
    main()
