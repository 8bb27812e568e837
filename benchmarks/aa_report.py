"""The A/A check's table and its ``## aa_check`` section of docs/benchmarks.md."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np

from skillharness.infer.summary import wilson
from skillharness.train.gate import DecisionKind, StrictlyBetterMinibatch
from skillharness.train.gate.power import sized_draws
from skillharness.util.atomic import atomic_write_text

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "benchmarks.md"
RESULTS = ROOT / "benchmarks" / "results" / "aa-check.json"
ALPHA = 0.05  # train.gate.alpha's default, which every test here keeps (alpha_spending: none)
_EDITS = {
    "same_text": "same text (the body re-stated)",
    "same_request": "a blank line before the body (byte-identical request)",
    "whitespace": "a doubled blank line in the body (request differs by one newline)",
}


def minibatch_accepts(gates: list[dict[str, Any]]) -> int:
    """Gates whose first 3 draws the GEPA-style rule (strictly better on 3) would have accepted."""
    rule = StrictlyBetterMinibatch()
    return sum(
        int(rule.run(np.asarray([g["first"]], dtype=np.int8)).kinds[0]) == DecisionKind.ACCEPT
        for g in gates
        if len(g["first"]) >= rule.size
    )


def _pct(x: float) -> str:
    return f"{100 * x:.1f} %"


def _refused_row(c: dict[str, Any]) -> str:
    gates = c["gates"]
    refused = sum(g["reason"] == "reject_invalid" for g in gates)
    cache = "on" if c["condition"]["cache"] else "off"
    return (
        f"| {_EDITS['same_text']} | – | {cache} | {len(gates)} | 0 "
        f"| refused before any draw ({refused} of {len(gates)}) | 0 | – | – | – | 0 | – |"
    )


def _row(c: dict[str, Any]) -> str:
    cond, gates = c["condition"], c["gates"]
    if cond["kind"] == "same_text":
        return _refused_row(c)
    n = len(gates)
    accepts = sum(g["reason"] == "accept" for g in gates)
    low, high = wilson(accepts, n)
    obs = sum(g["observations"] for g in gates)
    discordant = sum(g["wins"] + g["losses"] for g in gates)
    calls, hits = int(c["usage"].get("calls", 0)), int(c["usage"].get("cache_hits", 0))
    cells = [
        _EDITS[cond["kind"]],
        cond["arms"],
        "on" if cond["cache"] else "off",
        str(n),
        str(accepts),
        f"{_pct(accepts / n)} [{_pct(low)}, {_pct(high)}]",
        f"{np.mean([g['draws'] for g in gates]):.1f}",
        f"{discordant / obs:.2f} ({discordant} of {obs})",
        f"{sum(g['wins'] for g in gates)} : {sum(g['losses'] for g in gates)}",
        f"{c['draws_with_identical_requests']} of {c['draws_logged']}",
        f"{calls - hits:,} ({hits:,} hits)",
        str(minibatch_accepts(gates)),
    ]
    return "| " + " | ".join(cells) + " |"


def _pooled(conditions: list[dict[str, Any]]) -> list[str]:
    """The accepts over every gate that drew, and the wins' share of the discordant draws."""
    gates = [g for c in conditions if c["condition"]["kind"] != "same_text" for g in c["gates"]]
    accepts = sum(g["reason"] == "accept" for g in gates)
    wins, losses = sum(g["wins"] for g in gates), sum(g["losses"] for g in gates)
    low, high = wilson(accepts, len(gates))
    w_low, w_high = wilson(wins, wins + losses)
    mini = sum(minibatch_accepts(c["gates"]) for c in conditions)
    m_low, m_high = wilson(mini, len(gates))
    return [
        f"Over all {len(gates)} gates that drew: {accepts} accepts, {_pct(accepts / len(gates))} "
        f"[{_pct(low)}, {_pct(high)}] against α = {ALPHA:g}. The GEPA-style rule on the first 3 draws "
        f"of the same gates accepts {mini}, {_pct(mini / len(gates))} [{_pct(m_low)}, {_pct(m_high)}]. "
        f"Of the {wins + losses} discordant draws the candidate won {wins} "
        f"({_pct(wins / (wins + losses))} [{_pct(w_low)}, {_pct(w_high)}]); a null edit's arms split "
        "them evenly in expectation.",
    ]


_HEADER = (
    "| null edit | arms | cache | gates | accepts | false-accept rate [95 % Wilson] "
    "| draws per gate (mean) | discordance | candidate wins : losses | draws whose arms sent one request "
    "| server calls "
    "| strictly better on 3 (same draws) |"
)


def _intro(meta: dict[str, Any]) -> list[str]:
    q = meta["questions"]
    # Results written before these were recorded ran at the defaults of then: 1.5 and 0.1.
    futility_z, min_effect = meta.get("futility_z", 1.5), meta.get("min_effect", 0.1)
    low, high = (sized_draws(1 / ALPHA, r, min_effect) for r in (0.1, 0.5))
    return [
        "## aa_check",
        "",
        "Null edits gated by the training loop's own gate functions against a real model.",
        f"SmolLM2-135M-Instruct (`{meta['model']}`, llama.cpp from `scripts/ensure-llama-server.sh`,",
        f"{meta['servers']} one-thread servers) answers real Video-MME questions of one class",
        f"({q['task_type']}: {q['val_questions']} val questions, a seeded choice of videos) text only, as",
        f"our agent asks them: one turn, the default bundle, temperature {meta['temperature']:g}, at most",
        f"{meta['max_tokens']} tokens. Each gate is one null edit of the class's skill document, opened by",
        "`train/loop/open_gates.open_candidate` and fed by `train/loop/rounds.evidence_round` until it",
        "closes (paired draws a window at a time, the e-process, the sure and plausible futility stops),",
        "one checkpoint per condition as in a run (`benchmarks/aa_gates.py`). The gate config is the",
        f"default (α = {ALPHA:g} per test, no alpha spending, bet cap ½, stages 8, 16, 32, `futility_z`",
        (
            f"{futility_z:g}) except `n_max` = {meta['n_max']} (1024 by default, which "
            f"`min_effect` {min_effect:g} sizes down to"
        ),
        (
            f"about {low} to {high} draws at discordances of 0.1 to 0.5): at its default size a null "
            "test takes about"
        ),
        "30 to 150 draws before futility stops it (the same ladder, simulated; `--n-max 0 --gates 1` took",
        "8 to 128 draws per gate here), so 35 minutes would hold a few dozen gates, too few for an",
        "interval that says anything at α. Every other gate key is the default; agent.concurrency is 2.",
        "",
    ]


def _rests_on(meta: dict[str, Any], conditions: list[dict[str, Any]]) -> list[str]:
    events = sum(c.get("llm_events", 0) for c in conditions)
    return [
        'What it rests on: the agent sees no video (placeholder files; every prompt says "Video duration:',
        "60.0s\"); the decisions' `dual_metric` val score, a report and no part of the gate, is skipped;",
        "the proposal is the benchmark's, not an evolve call. Gates run round-robin over the conditions",
        "and none starts after `--max-minutes`, so the counts follow the machine's speed. The runs'",
        f"`llm_events` hold {events} rows (failed attempts and breaker moves): a dropped connection",
        "fails a call over to the other server, so that arm of a one-seed draw ran on another server.",
        f"Commit `{meta['commit'][:12]}`; `{meta['command']}` took {meta['elapsed_s']} s on",
        f"{meta['machine']} (load average before: {', '.join(str(x) for x in meta['load_before'])}).",
        "Raw results: `benchmarks/results/aa-check.json`.",
        "",
    ]


def section(report: dict[str, Any]) -> str:
    meta, conditions = report["meta"], report["conditions"]
    return "\n".join(
        [
            *_intro(meta),
            _HEADER,
            "|---|---|---|---|---|---|---|---|---|---|---|---|",
            *(_row(c) for c in conditions),
            "",
            *_pooled(conditions),
            "",
            *_rests_on(meta, conditions),
        ]
    )


def write_section(text: str) -> None:
    old = DOC.read_text()
    pattern = re.compile(r"^## aa_check\n.*?(?=^## |\Z)", re.S | re.M)
    new = pattern.sub(lambda _: text + "\n", old) if pattern.search(old) else old.rstrip("\n") + "\n\n" + text
    atomic_write_text(DOC, new)
