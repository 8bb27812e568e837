"""The evolve role: propose patch edits to a document from the failed cases it was shown.

Each edit is *useful* (a missing insight the cases need, reworded, or the deletion of a line
holding a harmful rule), *harmful* (a harmful rule) or *useless*: with ``evolve.decoy_rate`` a decoy
of the cases' task type (a concrete, plausible rule worth exactly nothing), else filler (worth a
small seeded amount either way: ``world.filler_effect_sd``).
How likely a useful edit is depends on the cases, as diagnosis is meant to make it: a model can
only state the missing insight that failures show it. The cases are the loaded questions the
prompt quotes; a case is *explained* when its question needs an insight the document lacks (or
the document holds a harmful rule, which lowers every question). With ``support`` the share of
explained cases, ``P(useful) = insight_rate * (f + (1 - f) * support)``, ``f`` being
``evolve.insight_unexplained_factor``: a pack of genuine defects gets ``insight_rate``, a pack of
lapses or noise ``f * insight_rate``. Anchors are whole lines that occur exactly once (as
substrings) in the document and lie in its body, so every proposal applies cleanly with skills.patch.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

from skillharness.data.questions import Question
from skillharness.sim.config import EvolveConfig
from skillharness.sim.insights import USELESS_RULES, normalize_text
from skillharness.sim.prompt import document_body
from skillharness.sim.world import Rule, World

__all__ = ["cases_task_type", "pack_support", "propose_edits", "unique_body_lines", "useful_rate"]


def cases_task_type(cases: tuple[Question, ...]) -> str | None:
    """The most common task type among ``cases`` (ties: alphabetical), or None."""
    if not cases:
        return None
    counts = Counter(q.task_type for q in cases)
    return min(counts, key=lambda t: (-counts[t], t))


def unique_body_lines(document: str) -> list[str]:
    """Non-blank body lines that occur exactly once in the whole document (usable anchors)."""
    body_lines = document_body(document).split("\n")
    all_lines = Counter(document.split("\n"))
    return [
        line for line in body_lines if line.strip() and all_lines[line] == 1 and document.count(line) == 1
    ]


def pack_support(world: World, document: str, cases: tuple[Question, ...]) -> float:
    """Share of ``cases`` the document's gaps explain (0.0 for no case: nothing to diagnose from).

    A case is explained when its question needs an insight absent from ``document``, or when the
    document holds a harmful rule (it lowers every question). The rest are lapses or noise: the
    document already holds what they need, so they show no gap a proposal could fill.
    """
    if not cases:
        return 0.0
    if world.harmful_present(document):
        return 1.0
    explained = sum(1 for q in cases if world.missing_insights(q, document))
    return explained / len(cases)


def useful_rate(config: EvolveConfig, support: float) -> float:
    """P(an edit is useful) for a pack with ``support``: ``insight_rate * (f + (1 - f) * support)``."""
    f = config.insight_unexplained_factor
    return config.insight_rate * (f + (1.0 - f) * support)


def _missing(world: World, document: str, cases: tuple[Question, ...], task_type: str | None) -> list[Rule]:
    """Missing insights, the ones most cases need first."""
    norm = normalize_text(document)
    counts: Counter[str] = Counter()
    for q in cases:
        counts.update(i for i in world.truth(q).needed if not world.insight(i).present_in(norm))
    if task_type is not None:  # insights no shown case needs still help other questions
        counts.update({r.id: 0 for r in world.insights_for(task_type) if not r.present_in(norm)})
    return [world.insight(i) for i, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]


def _edit_text(
    world: World,
    document: str,
    missing: list[Rule],
    harmful_lines: list[str],
    kind: str,
    rng: random.Random,
    task_type: str | None = None,
) -> tuple[str, str | None]:
    """(kind actually made, text or the harmful line to delete)."""
    if kind == "useful" and harmful_lines and (not missing or rng.random() < 0.5):
        return "delete", rng.choice(harmful_lines)
    if kind == "useful" and missing:
        rule = missing[0] if rng.random() < 0.7 else rng.choice(missing)
        return "insert", "- " + rng.choice(rule.wordings[1:] or rule.wordings)
    norm = normalize_text(document)
    if kind == "harmful":
        fresh = [r for r in world.harmful if not r.present_in(norm)] or list(world.harmful)
        return "insert", "- " + rng.choice(rng.choice(fresh).wordings)
    decoys = [r for r in world.decoys_for(task_type) if not r.present_in(norm)] if task_type else []
    # Drawn only when a decoy is possible, so a world without decoys draws as it did before them.
    if decoys and rng.random() < world.config.evolve.decoy_rate:
        return "insert", "- " + rng.choice(rng.choice(decoys).wordings)
    fresh_filler = [w for w in USELESS_RULES if normalize_text(w) not in norm] or list(USELESS_RULES)
    return "insert", "- " + rng.choice(fresh_filler)


def propose_edits(
    world: World, document: str, cases: tuple[Question, ...], rng: random.Random, under_test: str = ""
) -> dict[str, Any]:
    """A response object valid against ``RESPONSE_SCHEMAS[Role.EVOLVE]``.

    ``under_test`` is the text of the edit sets the prompt lists as under test: an insight stated
    there is not missing (a proposer told not to repeat them states another, or filler). The role
    passes it only for the share ``evolve.proposer_compliance`` of replies that heed the block.
    """
    cfg = world.config.evolve
    useful = useful_rate(cfg, pack_support(world, document, cases))
    task_type = cases_task_type(cases)
    missing = _missing(world, f"{document}\n{under_test}" if under_test else document, cases, task_type)
    anchors = unique_body_lines(document)
    harmful_lines = [line for line in anchors if world.harmful_present(line)]
    edits: list[dict[str, str]] = []
    new_lines: list[str] = []
    for _ in range(cfg.edits_per_call):
        u = rng.random()
        kind = "useful" if u < useful else "harmful" if u < useful + cfg.harmful_rate else "useless"
        made, text = _edit_text(world, document, missing, harmful_lines, kind, rng, task_type)
        if made == "delete" and text is not None:
            harmful_lines.remove(text)
            # The anchor is matched as a substring: take the line break too, so no blank line stays.
            anchor = text + "\n" if document.count(text + "\n") == 1 else text
            edits.append({"op": "delete", "anchor": anchor, "text": ""})
            continue
        if text is None or text in new_lines:
            continue
        new_lines.append(text)
        added = normalize_text("\n".join(new_lines))
        missing = [rule for rule in missing if not rule.present_in(added)]
    if not edits and not new_lines:  # every draw was a duplicate: still propose something
        new_lines.append("- " + USELESS_RULES[0])
    usable = [a for a in anchors if all(e["anchor"].rstrip("\n") != a for e in edits)]
    if new_lines and usable:
        # insert_after puts the text right after the anchor's last character: start a new line.
        edits.append(
            {"op": "insert_after", "anchor": usable[-1], "text": "".join("\n" + t for t in new_lines)}
        )
    elif new_lines:  # no line to anchor on (an empty body): rewrite it instead
        body = document_body(document).rstrip("\n")
        rewritten = "\n".join([line for line in [body, *new_lines] if line])
        return {
            "skill_update_mode": "rewrite",
            "edits": [],
            "body": rewritten,
            "rationale": _rationale(task_type),
        }
    return {"skill_update_mode": "patch", "edits": edits, "body": None, "rationale": _rationale(task_type)}


def _rationale(task_type: str | None) -> str:
    about = f"{task_type} questions" if task_type else "these questions"
    return f"The failed cases show the agent lacks guidance for {about}; the edit adds it."
