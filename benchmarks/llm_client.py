"""Benchmark: LLM client throughput and CPU per call against the simulator.

Run: ``.venv/bin/python benchmarks/llm_client.py [--write]``. The simulator runs in a separate
process with a fixed time-to-first-token L and no per-token delay; the harness side calls it at
concurrency C = 24 through the full stack (accounting → cache → retry → router → breaker →
client). Reported: achieved calls/s against the ideal C/L, and the client process's CPU time per
call (``time.process_time``), with the cache off and with a SQLite cache (every call a miss
followed by a store, the expensive path). ``--write`` puts the table in ``docs/benchmarks.md``
under ``## llm_client``.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from sim_calls import sim_server, timed_calls
from skillharness.llm.config import CacheConfig
from skillharness.util.atomic import atomic_write_text

DOC = Path(__file__).resolve().parent.parent / "docs" / "benchmarks.md"
CONCURRENCY = 24
LATENCIES_S = (1.0, 0.2)  # a typical LLM call lasts seconds; 0.2 s stresses the overhead
CALLS = 24 * 10


@dataclass(frozen=True)
class Result:
    label: str
    latency_s: float
    calls: int
    wall_s: float
    cpu_s: float

    @property
    def calls_per_s(self) -> float:
        return self.calls / self.wall_s

    @property
    def efficiency(self) -> float:
        return self.calls_per_s / (CONCURRENCY / self.latency_s)

    @property
    def cpu_ms_per_call(self) -> float:
        return 1000 * self.cpu_s / self.calls


async def _run(base_url: str, latency_s: float, label: str, cache: CacheConfig | None, calls: int) -> Result:
    tag = f"{label} "  # the variants share one server: their calls differ
    wall, cpu = await timed_calls(
        base_url, cache, calls=calls, concurrency=CONCURRENCY, warmup=calls, tag=tag
    )
    return Result(label, latency_s, calls, wall, cpu)


def _table(results: list[Result]) -> str:
    lines = [
        "| L | variant | calls | wall s | calls/s | ideal C/L | efficiency | client CPU ms/call |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        lines.append(
            f"| {r.latency_s} s | {r.label} | {r.calls} | {r.wall_s:.2f} | {r.calls_per_s:.1f} "
            f"| {CONCURRENCY / r.latency_s:.0f} "
            f"| {100 * r.efficiency:.1f} % | {r.cpu_ms_per_call:.2f} |"
        )
    return "\n".join(lines)


def _write(table: str) -> None:
    section = (
        "## llm_client\n\n"
        "The full LLM stack against the simulator (a separate process) with a fixed latency L "
        f"at concurrency C = {CONCURRENCY}; targets: ≥ 95 % of the ideal C/L calls/s and ≤ 2 ms client CPU "
        "per call. Reproduce with `.venv/bin/python benchmarks/llm_client.py --write`.\n\n" + table + "\n\n"
    )
    old = DOC.read_text() if DOC.exists() else "# Benchmarks\n"
    pattern = re.compile(r"^## llm_client\n.*?(?=^## |\Z)", re.S | re.M)
    new = pattern.sub(lambda _: section, old) if pattern.search(old) else old.rstrip("\n") + "\n\n" + section
    atomic_write_text(DOC, new)


def _measure(latency_s: float, calls: int) -> list[Result]:
    with sim_server(latency_s) as base_url, tempfile.TemporaryDirectory() as tmp:
        sqlite = CacheConfig(url=f"sqlite:///{Path(tmp) / 'bench.sqlite'}")
        return [
            asyncio.run(_run(base_url, latency_s, "no cache", None, calls)),
            asyncio.run(_run(base_url, latency_s, "sqlite cache, all misses", sqlite, calls)),
        ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="write the table into docs/benchmarks.md")
    parser.add_argument("--calls", type=int, default=CALLS, help="measured calls per variant")
    args = parser.parse_args()
    results = [r for latency in LATENCIES_S for r in _measure(latency, args.calls)]
    table = _table(results)
    print(table)
    if args.write:
        _write(table)


if __name__ == "__main__":
    main()
