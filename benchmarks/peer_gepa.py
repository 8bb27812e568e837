"""The peer: GEPA 0.1.4 on our efficiency setups' simulator worlds, splits and call budget.

Run: ``.venv/bin/python benchmarks/peer_gepa.py --dataset videomme-q videomme-v --seeds 0 1 2 3 4
[--budget 8000] [--marks 2000 8000] [--videomme PATH] [--sim KEY=VALUE] [--results FILE]``;
``--reread FILE`` prints a stored measurement's tables again (no run). ``--dataset synth-q`` runs on
the bundled synthetic benchmark (small; for trying the driver out); ``--dataset mvbench-like`` the
synthetic MVBench-shaped world (20 task types, five options; ``simlab.efficiency``).

Each seed is one GEPA run, in this process, one after the other, on the world, split and initial
bundle our efficiency job of that setup and seed uses; the rules that make the two comparable
(rollouts by our agent, proposals by our evolve role, every model call counted) are in
``simlab/gepa_adapter.py``, and how a run is read at a mark in ``simlab/gepa_run.py``. Needs the
``gepa`` extra (``pip install -e '.[gepa]'``).
"""

from __future__ import annotations

import argparse
import datetime
import json
import shlex
import sys
import tempfile
import time
from collections.abc import Sequence
from importlib.metadata import version
from pathlib import Path
from typing import Any

from simlab.efficiency import SETUPS, Job, Setup, setup_sources
from simlab.gepa_run import SYNTH_SETUP, GepaReading, run_gepa_job
from simlab.marks import spread
from simlab.provenance import code_state
from simlab.report import VAL_TEST_HEAD, val_test_cells
from simlab.world import (
    ROOT,
    VIDEOMME,
    dotted_settings,
    questions_path,
    sim_fingerprint,
    sim_world,
    synth_source,
)
from skillharness.util.atomic import atomic_write_text

SETUP_CHOICES: dict[str, Setup] = {**SETUPS, SYNTH_SETUP.name: SYNTH_SETUP}
RESULTS = ROOT / "benchmarks" / "results" / "gepa-honest-8k.json"


def parser() -> argparse.ArgumentParser:
    out = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    out.add_argument("--dataset", nargs="+", choices=list(SETUP_CHOICES), default=["videomme-q"])
    out.add_argument("--seeds", type=int, nargs="+", help="World seeds (default: each setup's).")
    out.add_argument("--budget", type=int, default=8_000, help="Model calls, cache hits excluded.")
    out.add_argument("--marks", type=int, nargs="+", default=[2_000, 8_000], help="Budgets read.")
    out.add_argument("--world", choices=("realistic", "decisive"), default="realistic")
    out.add_argument(
        "--sim", action="append", default=[], metavar="KEY=VALUE", help="A simulator setting (repeatable)."
    )
    out.add_argument(
        "--videomme", type=questions_path, default=VIDEOMME, help="The Video-MME questions file."
    )
    out.add_argument("--max-minutes", type=float, default=60.0, help="Wall time of one seed's run.")
    out.add_argument("--results", type=Path, default=RESULTS, help="Per-seed records (JSON).")
    out.add_argument("--reread", type=Path, help="Print a stored measurement's tables (no run).")
    out.add_argument("--workdir", type=Path, help="An empty folder to keep the runs in.")
    return out


def plan(args: argparse.Namespace, folder: Path, sim: dict[str, Any]) -> list[tuple[Job, Setup]]:
    """One job per setup and seed, at ``--budget``, read at every mark."""
    marks = tuple(sorted({*args.marks, args.budget}))
    jobs = []
    for name in args.dataset:
        setup = SETUP_CHOICES[name]
        if name == SYNTH_SETUP.name:
            source = synth_source(folder, folder)
        else:
            source = setup_sources([name], folder, args.videomme)[name]
        for seed in args.seeds if args.seeds is not None else setup.seeds:
            where = folder / f"{name}-s{seed}"
            job = Job(name, seed, args.budget, marks, args.world, source, where, args.max_minutes, sim=sim)
            jobs.append((job, setup))
    return jobs


def _progress(record: dict[str, Any]) -> str:
    name = f"{record['setup']} seed {record['seed']}"
    if "error" in record:
        return f"{name}: FAILED {record['error']}\n"
    last = record["readings"][str(record["budget"])]
    return (
        f"{name}: returned {last['closure_test']:.1%} at {last['calls']:,} calls (oracle-best in pool "
        f"{last['best_closure_test']:.1%}), {last['accepted']} accepted, {record['spent']:,} calls "
        f"({record['end_reason']}), {record['wall_s']:.0f} s\n"
    )


def _pct(values: Sequence[float]) -> str:
    s = spread(values)
    return f"{s.mean * 100:.1f} % ({s.low * 100:.1f}–{s.high * 100:.1f})"


def _readings(records: Sequence[dict[str, Any]], setup: str, mark: int) -> list[GepaReading]:
    return [
        GepaReading(**r["readings"][str(mark)]) for r in records if r["setup"] == setup and "error" not in r
    ]


def summary_table(records: Sequence[dict[str, Any]], setups: Sequence[str], marks: Sequence[int]) -> str:
    lines = [
        "| setup | calls | seeds | GEPA returned (mean, min–max) | GEPA oracle-best in pool | accepted "
        "| harmful or useless share |",
        "|---|---|---|---|---|---|---|",
    ]
    for setup in setups:
        for mark in marks:
            rs = _readings(records, setup, mark)
            if not rs:
                continue
            accepted, harmful = sum(r.accepted for r in rs), sum(r.harmful for r in rs)
            lines_n, bad = sum(r.lines for r in rs), sum(r.harmful_lines for r in rs)
            share = f"{harmful}/{accepted} ({harmful / accepted:.0%})" if accepted else "0/0"
            share += f"; lines {bad}/{lines_n}" + (f" ({bad / lines_n:.0%})" if lines_n else "")
            lines.append(
                f"| {setup} | {mark:,} | {len(rs)} | {_pct([r.closure_test for r in rs])} "
                f"| {_pct([r.best_closure_test for r in rs])} "
                f"| {accepted} ({accepted / len(rs):.1f} per seed) | {share} |"
            )
    return "\n".join(lines) + "\n"


def seeds_table(records: Sequence[dict[str, Any]], marks: Sequence[int]) -> str:
    """Each seed at each mark, then (at the last mark, the candidate GEPA returns) its val gap closure
    beside its test gap closure and the accepted lines' harmful or useless share on test."""
    head = " | ".join(f"{m:,} calls" for m in marks)
    lines = [
        f"| setup | seed | {head} | calls spent | end | wall s | iterations "
        f"| val / minibatch / propose calls | proposals (made, refused, no evidence) | {VAL_TEST_HEAD} |",
        "|---|---|" + "---|" * len(marks) + "---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in records:
        if "error" in r:
            lines.append(f"| {r['setup']} | {r['seed']} | FAILED: {r['error']} |")
            continue
        cells = []
        for m in marks:
            g = GepaReading(**r["readings"][str(m)])
            cells.append(f"{g.closure_test:.1%} at {g.calls:,} (best {g.best_closure_test:.1%})")
        phase, made = r["calls_by_phase"], r["proposals"]
        last = GepaReading(**r["readings"][str(max(marks))])
        gap = val_test_cells(last.closure_val, last.closure_test, last.lines, last.harmful_lines)
        lines.append(
            f"| {r['setup']} | {r['seed']} | {' | '.join(cells)} | {r['spent']:,} (+{r['overshoot']}) "
            f"| {r['end_reason']} | {r['wall_s']:.0f} | {r['iterations']} "
            f"| {phase.get('val', 0):,} / {phase.get('minibatch', 0):,} / {phase.get('propose', 0):,} "
            f"| {made.get('proposed', 0)}, {made.get('refused', 0)}, {made.get('no_evidence', 0)} | {gap} |"
        )
    return "\n".join(lines) + "\n"


def render(doc: dict[str, Any]) -> str:
    records = doc["runs"]
    setups = list(dict.fromkeys(r["setup"] for r in records))
    head = (
        f"`{doc['command']}` at `{doc['commit'][:7]}` (gepa {doc['gepa']}, "
        f"simulator `{doc['sim_fingerprint']}`, {doc['elapsed_s']:.0f} s):\n\n"
    )
    return head + summary_table(records, setups, doc["marks"]) + "\n" + seeds_table(records, doc["marks"])


def measure(args: argparse.Namespace, argv: list[str]) -> dict[str, Any]:
    """Every seed of every setup, one after the other; the results document."""
    try:
        sim = dotted_settings(args.sim, "--sim")
        world = sim_world(args.world, 0, sim)
    except ValueError as exc:  # a pydantic ValidationError is one
        sys.exit(f"--sim: {exc}")
    start = time.perf_counter()
    records = []
    with tempfile.TemporaryDirectory(prefix="gepa-") as tmp:
        for job, setup in plan(args, args.workdir or Path(tmp), sim):
            records.append(run_gepa_job(job, setup))
            sys.stderr.write(_progress(records[-1]))
    return {
        "command": shlex.join(["benchmarks/peer_gepa.py", *argv]),
        "commit": code_state(ROOT),
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "gepa": version("gepa"),
        "world": args.world,
        "sim": sim,
        "sim_fingerprint": sim_fingerprint(world),
        "budget": args.budget,
        "marks": sorted({*args.marks, args.budget}),
        "max_minutes": args.max_minutes,
        "elapsed_s": time.perf_counter() - start,
        "runs": records,
    }


def main(argv: list[str] | None = None) -> None:
    given = list(argv if argv is not None else sys.argv[1:])
    args = parser().parse_args(given)
    if args.reread is not None:
        sys.stdout.write(render(json.loads(args.reread.read_text(encoding="utf-8"))))
        return
    if max(args.marks) > args.budget:
        sys.exit(f"--marks {max(args.marks)} is past --budget {args.budget}: a run stops at its budget")
    uses_videomme = any(SETUPS[n].source == "videomme" for n in args.dataset if n in SETUPS)
    if uses_videomme and not args.videomme.is_file():
        sys.exit(f"no Video-MME questions at {args.videomme}: nothing to measure (see --videomme)")
    doc = measure(args, given)
    args.results.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(args.results, json.dumps(doc, indent=1, sort_keys=True) + "\n")
    sys.stdout.write(render(doc))


if __name__ == "__main__":
    main()
