"""Benchmark: what a blind choice among sampled proposals tests, against the first sample.

Run: ``.venv/bin/python benchmarks/blind_choice.py QUESTIONS [--benchmark videomme] [--packs 4000]
[--seed 0]``. For each of ``--packs`` case packs
(four questions of one class, drawn at random) the simulator's evolve role answers three sampled
requests of one prompt, through the role path a run uses (the shared draw of
``evolve.sample_alike`` included), on the class's starting skill. It prints the share of each kind
of proposal (insight, decoy, filler, harmful) that three designs would test:

- **first**: the first sample (the greedy design, one proposal);
- **blind, distinct**: a uniform pick among the samples that leave distinct documents (the ranked
  design's candidates, ``_distinct_valid``, with the rank role at chance);
- **blind, all**: a uniform pick among the three samples.

By exchangeability the first and "blind, all" test the same mix; "blind, distinct" differs only
where identical texts are merged. Each share has its 95 % Wilson interval. Seconds.
"""

from __future__ import annotations

import argparse
import random
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from skillharness.data import read_questions
from skillharness.data.questions import Question
from skillharness.infer.summary import wilson
from skillharness.llm.roles import DOCUMENT_CLOSE, DOCUMENT_OPEN, Role
from skillharness.sim.config import SimConfig
from skillharness.sim.insights import normalize_text
from skillharness.sim.roles import RoleBehaviours
from skillharness.sim.world import World
from skillharness.skills.bundle import initial_bundle

KINDS = ("insight", "decoy", "filler", "harmful")
DESIGNS = ("first", "blind, distinct", "blind, all")


def kind_of(world: World, text: str, task_type: str) -> str:
    """What a proposal's inserted text states, by the world's hidden rules."""
    norm = normalize_text(text)
    if any(rule.present_in(norm) for rule in world.insights_for(task_type)):
        return "insight"
    if any(rule.present_in(norm) for rule in world.harmful):
        return "harmful"
    if any(rule.present_in(norm) for rule in world.decoys_for(task_type)):
        return "decoy"
    return "filler"


def _prompt(document: str, cases: Sequence[Question]) -> str:
    quoted = "\n\n".join(f"{q.question}\n" + "\n".join(q.options) for q in cases)
    return f"{DOCUMENT_OPEN}\n{document}\n{DOCUMENT_CLOSE}\n\nFailed cases:\n{quoted}"


def tally(world: World, packs: int, seed: int) -> dict[str, Counter[str]]:
    """Kinds tested by each design over ``packs`` random packs."""
    roles = RoleBehaviours(world)
    by_class: dict[str, list[Question]] = {}
    for q in world.questions.values():
        by_class.setdefault(q.task_type, []).append(q)
    classes = sorted(t for t, qs in by_class.items() if len(qs) >= 4)
    bundle = initial_bundle(classes)
    rng = random.Random(seed)
    counts: dict[str, Counter[str]] = {d: Counter() for d in DESIGNS}
    for _ in range(packs):
        task_type = rng.choice(classes)
        text = _prompt(bundle.skill(task_type).render(), rng.sample(by_class[task_type], 4))
        replies = [
            roles.respond(
                {"messages": [{"role": "user", "content": text}], "temperature": 0.7, "sample_idx": i},
                Role.EVOLVE,
            ).content
            for i in range(3)
        ]
        distinct = list(dict.fromkeys(replies))  # a role's reply fixes the document it leaves
        picks = (replies[0], rng.choice(distinct), rng.choice(replies))
        for design, pick in zip(DESIGNS, picks, strict=True):
            counts[design][kind_of(world, pick, task_type)] += 1
    return counts


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("questions", type=Path, help="a questions file (or folder) of the benchmark")
    parser.add_argument("--benchmark", default="videomme", help="its adapter: a built-in name or a .yaml")
    parser.add_argument("--packs", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    world = World(SimConfig(seed=args.seed), list(read_questions(args.questions, args.benchmark)))
    counts = tally(world, args.packs, args.seed)
    print(f"| design | {' | '.join(KINDS)} |\n|---|{'---|' * len(KINDS)}")
    for design in DESIGNS:
        cells = []
        for kind in KINDS:
            share = counts[design][kind] / args.packs
            low, high = wilson(counts[design][kind], args.packs)
            cells.append(f"{100 * share:.1f} % ({100 * low:.1f}–{100 * high:.1f})")
        print(f"| {design} | {' | '.join(cells)} |")


if __name__ == "__main__":
    main()
