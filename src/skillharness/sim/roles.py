"""The judge, evolve, rank, momentum and consolidate roles: plausible, noisy, valid JSON.

Each answer is a pure function of the seed, the request's text, ``temperature``, ``seed`` and
the draw index (:func:`~skillharness.sim.prompt.draw_index`: ``sample_idx`` only when the request
samples). At temperature 0 a role answers the same request alike whatever its ``sample_idx``, as a
real server does; a sampled evolve reply may take the prompt's shared draw instead
(``evolve.sample_alike``), as a real model's samples of one prompt are often alike. The rank role
reads only the candidates' text (``rank_choice``). The document a call works on is found between
DOCUMENT_OPEN and DOCUMENT_CLOSE;
the questions it is about are recognised by their text and options (see matching.py).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from statistics import NormalDist
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

__all__ = ["RoleBehaviours", "rank_choice"]

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
            self._draw(body, role, text),
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

    def _draw(self, body: dict[str, Any], role: Role, text: str) -> int | str:
        """The draw a reply is: :func:`draw_index`, except that a sampled evolve reply takes the
        prompt's shared draw with probability ``evolve.sample_alike`` (a real model's samples of one
        prompt at temperature 0.7 are alike far more often than independent draws would be)."""
        index = draw_index(body)
        temperature = body.get("temperature")
        greedy = body.get("seed") is not None or (temperature is not None and temperature <= 0)
        if role is not Role.EVOLVE or greedy:
            return index
        u = uniform(self.config.seed, "alike", digest(text), index, temperature)
        return "shared" if u < self.config.evolve.sample_alike else index

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
        r = self.config.evolve.rank_informativeness
        shown: dict[int, float] = {}
        for i, match in enumerate(matches):
            end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
            segment = text[match.end() : end].split(DOCUMENT_OPEN)[0]  # the current document is no candidate
            # At r = 0 the text is not read at all: the choice is the noise alone, blind to the truth.
            shown[int(match.group(1))] = self._shown_value(segment) if r > 0 else 0.0
        options: list[int | None] = [*sorted(shown), *([None] if RANK_DECLINE_OFFER in text else [])]
        noise = {c: _normal(uniform(*key, "rank_noise", "none" if c is None else c)) for c in options}
        choice = rank_choice(shown, noise, r)
        if choice is None:
            return {"choice": RANK_NONE, "reason": "No candidate states a rule the failures call for."}
        return {"choice": choice, "reason": "This candidate addresses the failures most directly."}

    def _shown_value(self, segment: str) -> float:
        """What a candidate's text shows: the concrete rules it states, insights and decoys alike
        (their wording cannot tell them apart), minus twice the harmful rules (recognisably bad);
        -1 when it states neither (filler: recognisably generic advice, below declining's 0)."""
        norm = normalize_text(segment)
        task_types = {q.task_type for q in self.world.questions.values()}
        concrete = [
            *(r for r in self.world.all_rules(task_types) if r.task_type is not None),
            *(d for t in task_types for d in self.world.decoys_for(t)),
        ]
        good = sum(1 for r in concrete if r.present_in(norm))
        bad = sum(1 for r in self.world.harmful if r.present_in(norm))
        return good - 2 * bad if good or bad else -1.0

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


def _normal(u: float) -> float:
    return NormalDist().inv_cdf(min(max(u, 1e-12), 1 - 1e-12))


def rank_choice(shown: Mapping[int, float], noise: Mapping[int | None, float], r: float) -> int | None:
    """The option with the highest ``r * shown + sqrt(1 - r^2) * noise``: a candidate, or None
    (declining, offered when ``noise`` has a None entry; it shows 0, what doing nothing is worth).

    Ties go to declining, then to the lowest candidate, so at ``r`` 1 the role declines exactly when
    no candidate shows more than 0. At ``r`` 0 ``shown`` has no weight: every option is equally
    likely, whichever candidate holds what.
    """
    spread = math.sqrt(max(0.0, 1.0 - r * r))

    def score(option: int | None) -> tuple[float, int, int]:
        value = 0.0 if option is None else shown[option]
        return (r * value + spread * noise[option], option is None, -(option or 0))

    return max(noise, key=score)


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
