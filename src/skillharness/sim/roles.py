"""The judge, evolve, rank, momentum and consolidate roles: plausible, noisy, valid JSON.

Each answer is a pure function of the seed, the request's text, ``temperature``, ``seed`` and
the draw index (:func:`~skillharness.sim.prompt.draw_index`: ``sample_idx`` only when the request
samples). At temperature 0 a role answers the same request alike whatever its ``sample_idx``, as a
real server does. The document a call works on is found between DOCUMENT_OPEN and DOCUMENT_CLOSE;
the questions it is about are recognised by their text and options (see matching.py).
"""

from __future__ import annotations

import json
import re
from typing import Any

from skillharness.llm.roles import DOCUMENT_OPEN, RANK_DECLINE_OFFER, RANK_NONE, Role
from skillharness.sim.config import EvolveConfig
from skillharness.sim.draw import digest, rng_for, uniform
from skillharness.sim.evolve_role import propose_edits
from skillharness.sim.insights import RESTATE_FORMS, normalize_text
from skillharness.sim.prompt import (
    all_text,
    document_body,
    draw_index,
    extract_document,
    extract_under_test,
    prompt_tokens,
)
from skillharness.sim.wire import Reply, estimate_tokens
from skillharness.sim.world import World

__all__ = ["RoleBehaviours"]

# A candidate heading in a rank prompt: "### Candidate 2", "Candidate #2", "candidate [2]".
_CANDIDATE = re.compile(r"^\W*candidate\s*#?\s*\[?(\d+)\]?", re.IGNORECASE | re.MULTILINE)


class RoleBehaviours:
    """Answers every JSON-schema role for one :class:`World`."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.config = world.config

    def respond(self, body: dict[str, Any], role: Role) -> Reply:
        text = all_text(body)
        key = (
            self.config.seed,
            role.value,
            digest(text),
            draw_index(body),
            body.get("temperature"),
            body.get("seed"),
        )
        handler = {
            Role.JUDGE: self._judge,
            Role.EVOLVE: self._evolve,
            Role.RANK: self._rank,
            Role.MOMENTUM: self._momentum,
            Role.CONSOLIDATE: self._consolidate,
        }[role]
        payload = handler(text, key)
        content = json.dumps(payload, ensure_ascii=False)
        return Reply(content, (), "stop", prompt_tokens(body), estimate_tokens(content))

    # --- judge ----------------------------------------------------------------------------
    def _judge(self, text: str, key: tuple[Any, ...]) -> dict[str, Any]:
        cfg = self.config.judge
        question = self.world.find_question(text)
        if question is None:
            return {
                "verdict": "uncertain",
                "target": "skill",
                "reason": "I cannot tell which question this is.",
            }
        document = extract_document(text)
        missing = self.world.missing_insights(question, document if document is not None else text)
        verdict = "defect" if missing else "lapse"
        if uniform(*key, "flip") < cfg.noise:
            verdict = "lapse" if verdict == "defect" else "defect"
        if uniform(*key, "uncertain") < cfg.uncertain_rate:
            verdict = "uncertain"
        reasons = {
            "defect": "The instructions do not tell the agent how to approach this kind of question.",
            "lapse": "The instructions cover this case; the agent did not follow them.",
            "uncertain": "The trace does not show clearly why the answer was wrong.",
        }
        return {"verdict": verdict, "target": "skill", "reason": reasons[verdict]}

    # --- evolve ---------------------------------------------------------------------------
    def _evolve(self, text: str, key: tuple[Any, ...]) -> dict[str, Any]:
        document = extract_document(text) or ""
        cases = self.world.index.find_all(text)
        # A proposer that does not heed the block listing the edit sets under test ignores it.
        heeds = uniform(*key, "heeds_under_test") < self.config.evolve.proposer_compliance
        under_test = extract_under_test(text) if heeds else ""
        return propose_edits(self.world, document, cases, rng_for(*key, "evolve"), under_test)

    # --- rank -----------------------------------------------------------------------------
    def _rank(self, text: str, key: tuple[Any, ...]) -> dict[str, Any]:
        matches = list(_CANDIDATE.finditer(text))
        if not matches:
            return {"choice": 0, "reason": "Only one candidate was shown."}
        scores: dict[int, float] = {}
        for i, match in enumerate(matches):
            end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
            segment = text[match.end() : end].split(DOCUMENT_OPEN)[0]  # the current document is no candidate
            scores[int(match.group(1))] = self._candidate_score(segment)
        choices = sorted(scores)
        may_decline = RANK_DECLINE_OFFER in text
        if uniform(*key, "rank") < self.config.evolve.rank_accuracy:
            choice = max(choices, key=lambda c: (scores[c], -c))
            if may_decline and scores[choice] <= 0:
                return {"choice": RANK_NONE, "reason": "No candidate states a rule the failures call for."}
            return {"choice": choice, "reason": "This candidate addresses the failures most directly."}
        # A rank role no better than chance declines as often as it picks any one candidate.
        choice = rng_for(*key, "rank_pick").choice([*choices, RANK_NONE] if may_decline else choices)
        return {"choice": choice, "reason": "This candidate seems the most general."}

    def _candidate_score(self, segment: str) -> float:
        norm = normalize_text(segment)
        task_types = {q.task_type for q in self.world.questions.values()}
        rules = self.world.all_rules(task_types)
        good = sum(1 for r in rules if r.task_type is not None and r.present_in(norm))
        bad = sum(1 for r in rules if r.task_type is None and r.present_in(norm))
        return good - 2 * bad

    # --- momentum -------------------------------------------------------------------------
    def _momentum(self, text: str, key: tuple[Any, ...]) -> dict[str, Any]:
        # It restates (in paraphrase) insights the body holds, each in a form drawn per insight: the
        # clear form helps the questions that need the insight, the muddled one hurts them, the
        # plain one changes nothing (world.restate_gain; evolve.momentum_*_rate).
        body = document_body(extract_document(text) or "")
        norm = normalize_text(body)
        task_types = sorted({q.task_type for q in self.world.questions.values()})
        lines = []
        for rule in self.world.all_rules(task_types):
            if rule.task_type is None or not rule.present_in(norm):
                continue
            wording = (
                rule.wordings[1 + int(uniform(*key, rule.id) * (len(rule.wordings) - 1))]
                if len(rule.wordings) > 1
                else rule.canonical
            )
            form = _restate_form(self.config.evolve, uniform(*key, rule.id, "form"))
            lines.append("- " + RESTATE_FORMS[form].format(wording=wording))
        return {"guidance": "\n".join(lines[:4]) or "- Keep following the rules above."}

    # --- consolidate ----------------------------------------------------------------------
    def _consolidate(self, text: str, key: tuple[Any, ...]) -> dict[str, Any]:
        document = extract_document(text) or ""
        seen: set[str] = set()
        lines: list[str] = []
        for line in document.split("\n"):
            norm = normalize_text(line)
            if norm.strip() and norm in seen:
                continue  # drop exact (normalized) repeats: the compaction a real model does
            seen.add(norm)
            if line.strip() or (lines and lines[-1].strip()):
                lines.append(line)
        if uniform(*key, "drop") < self.config.evolve.consolidate_drop_rate:
            lines = _drop_one_instruction(self.world, lines, rng_for(*key, "drop_which"))
        return {"system_prompt": "\n".join(lines).strip("\n")}


def _restate_form(config: EvolveConfig, u: float) -> str:
    """The form (a key of ``RESTATE_FORMS``) slow momentum restates one insight in, from a uniform."""
    if u < config.momentum_clear_rate:
        return "clear"
    if u < config.momentum_clear_rate + config.momentum_muddled_rate:
        return "muddled"
    return "plain"


def _drop_one_instruction(world: World, lines: list[str], rng: Any) -> list[str]:
    task_types = sorted({q.task_type for q in world.questions.values()})
    rules = world.all_rules(task_types)
    candidates = [i for i, line in enumerate(lines) if any(r.present_in(normalize_text(line)) for r in rules)]
    if not candidates:
        return lines
    drop = rng.choice(candidates)
    return [line for i, line in enumerate(lines) if i != drop]
