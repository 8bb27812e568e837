"""The hidden ground truth: insights per task type, harmful rules, filler and each question's needs.

Everything is a pure function of the seed, the question id and the :class:`WorldConfig`, so the
server and the oracle (and a second process with the same seed) agree exactly.

Probability that the agent *intends* the right letter for question ``q`` given text ``T``::

    p = clip(base_q + gain_q * (share_q(T) + restate_gain * restated_q(T) / needed_q)
             - side_q(T) - harm_per_rule * harmful(T) + filler_t(T), floor, ceiling)
    share_q(T) = k / n * (1 + insight_overlap * (n - k) / n),  k = present_q(T), n = needed_q

where ``present_q(T)`` counts q's needed insights whose wording (any accepted one) is in ``T``,
``restated_q(T)`` those restated in the clear form minus those in the muddled form (slow
momentum's, ``insights.RESTATE_FORMS``), ``harmful(T)`` counts harmful rules whose wording is in
``T``, ``filler_t(T)`` sums a fixed seeded effect per filler wording present (for q's task type
t) and ``side_q(T)`` sums the side effects on q of the insights present that q does not need: each
of its class's other insights lowers q with probability ``world.side_effect_share``, by a size
drawn from ``Uniform(side_effect_min, side_effect_max)``, both fixed per (question, insight) by the
seed. Decoys (plausible rules of a class, ``insights.DECOY_BANK``) are worth exactly nothing.
At ``insight_overlap`` 0 insights add up; above 0 they are sub-additive. With
``video_correlation`` the draws of one video's questions in one sample are coupled
(:meth:`World.correct_draw`); with ``seed_coupling`` the draws of two instruction texts asked with
one request seed are coupled (:meth:`World.seed_coupled`). Each question's probability, and so the
oracle, is unchanged by either coupling.

What the harness *scores* is less than ``p``: the agent role reads the question off the prompt and
may take it for another with the same text and options (:meth:`World.resolved`), writes one
answer in ten in an awkward shape of which two in five do not parse (:meth:`World.letter_kept_share`),
and a tool plan longer than the run's step limit ends with no answer
(:meth:`World.plan_completion_share`). :meth:`World.p_scored` is the product, exactly: every one of
those draws is its own keyed uniform, independent of the others.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from statistics import NormalDist

from skillharness.data.questions import Question
from skillharness.sim.config import LETTER_PRESERVING_SHAPES, AnswerShape, SimConfig
from skillharness.sim.draw import rng_for, uniform
from skillharness.sim.insights import (
    DECOY_BANK,
    GENERIC_DECOYS,
    GENERIC_INSIGHTS,
    HARMFUL_RULES,
    INSIGHT_BANK,
    RESTATE_FORMS,
    USELESS_RULES,
    normalize_text,
)
from skillharness.sim.matching import QuestionIndex

__all__ = ["AgentPath", "Presence", "QuestionTruth", "Rule", "World"]

_PRESENCE_CACHE = 1024  # distinct (text, task type) pairs remembered; cleared when full


def _open_unit(u: float) -> float:
    # inv_cdf needs (0, 1); a hash-drawn uniform can be exactly 0.
    return min(max(u, 1e-12), 1 - 1e-12)


@dataclass(frozen=True)
class Rule:
    """An insight or a harmful rule: an id and its accepted wordings (the first is canonical)."""

    id: str
    task_type: str | None  # None for harmful rules (they hurt every task type)
    wordings: tuple[str, ...]

    @property
    def canonical(self) -> str:
        return self.wordings[0]

    @functools.cached_property
    def normalized(self) -> tuple[str, ...]:
        return tuple(normalize_text(w) for w in self.wordings)

    def present_in(self, normalized_text: str) -> bool:
        """Whether any wording appears in a text already passed through ``normalize_text``."""
        return any(w in normalized_text for w in self.normalized)

    @functools.cached_property
    def _restated(self) -> dict[str, tuple[str, ...]]:
        return {
            form: tuple(normalize_text(template.format(wording=w)) for w in self.wordings)
            for form, template in RESTATE_FORMS.items()
        }

    def restated_in(self, normalized_text: str, form: str) -> bool:
        """Whether a normalized text restates this rule in ``form`` (a key of ``RESTATE_FORMS``)."""
        return any(w in normalized_text for w in self._restated[form])


@dataclass(frozen=True)
class QuestionTruth:
    """What the world knows about one question."""

    question_id: str
    task_type: str
    answer: str
    letters: tuple[str, ...]
    base: float
    gain: float
    needed: tuple[str, ...]  # insight ids
    # (insight id, accuracy lost) for each insight the question does not need that lowers it
    side: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True)
class AgentPath:
    """How a run asks the agent role and reads its answer: what the scored truth depends on.

    ``tools``: the tool-using agent (protocol ``skillharness``); False is one plain request (a
    reference protocol), answered in text and read by our normalizer. ``frames`` and ``subtitles``:
    whether ``get_frames`` (``agent.vision``) and ``get_subtitles`` (``agent.subtitles`` with
    subtitle files) are offered, which sets how long the role's tool plan can be. ``max_steps``:
    the run's model turns per question. ``bundle_in_prompt``: on the plain path, whether the bundle
    is sent (``agent.protocol_bundle_slot`` other than ``none``); the tool-using agent always sends it.
    """

    tools: bool = True
    frames: bool = True
    subtitles: bool = True
    max_steps: int = 6
    bundle_in_prompt: bool = True

    def __post_init__(self) -> None:
        if isinstance(self.max_steps, bool) or not isinstance(self.max_steps, int) or self.max_steps < 1:
            raise ValueError(f"an agent path needs max_steps >= 1, not {self.max_steps!r}")


@dataclass(frozen=True)
class Presence:
    """What one text holds for one task type's questions."""

    insights: frozenset[str]  # ids of the task type's insights present
    harmful: int  # harmful rules present
    filler: float  # the summed effect of the filler wordings present
    clear: frozenset[str]  # ids of insights restated in the clear form
    muddled: frozenset[str]  # ids of insights restated in the muddled form


class World:
    """Insights, harmful rules and per-question truth for one seed and one set of questions."""

    def __init__(self, config: SimConfig, questions: Sequence[Question] = ()) -> None:
        self.config = config
        self.questions = {q.question_id: q for q in questions}
        self.index = QuestionIndex(questions)
        self.harmful = tuple(Rule(f"harmful:{i}", None, w) for i, w in enumerate(HARMFUL_RULES))
        self._insights: dict[str, tuple[Rule, ...]] = {}
        self._decoys: dict[str, tuple[Rule, ...]] = {}
        self._truths: dict[str, QuestionTruth] = {}
        self._presence_cache: dict[tuple[str, str], Presence] = {}

    # --- rules --------------------------------------------------------------------------
    def insights_for(self, task_type: str) -> tuple[Rule, ...]:
        """The hidden insights of ``task_type`` (any name works; unknown ones get generic rules)."""
        if task_type not in self._insights:
            bank = INSIGHT_BANK.get(task_type) or tuple(
                tuple(w.format(task=task_type) for w in wordings) for wordings in GENERIC_INSIGHTS
            )
            chosen = bank[: self.config.world.insights_per_task]
            self._insights[task_type] = tuple(
                Rule(f"{task_type}:{i}", task_type, wordings) for i, wordings in enumerate(chosen)
            )
        return self._insights[task_type]

    def decoys_for(self, task_type: str) -> tuple[Rule, ...]:
        """The decoys of ``task_type``: rules worded like its insights that change no question."""
        if task_type not in self._decoys:
            bank = DECOY_BANK.get(task_type) or tuple(
                tuple(w.format(task=task_type) for w in wordings) for wordings in GENERIC_DECOYS
            )
            self._decoys[task_type] = tuple(
                Rule(f"decoy:{task_type}:{i}", task_type, wordings) for i, wordings in enumerate(bank)
            )
        return self._decoys[task_type]

    def insight(self, insight_id: str) -> Rule:
        task_type, _, _ = insight_id.rpartition(":")
        return next(rule for rule in self.insights_for(task_type) if rule.id == insight_id)

    def all_rules(self, task_types: Iterable[str]) -> tuple[Rule, ...]:
        return tuple(r for t in task_types for r in self.insights_for(t)) + self.harmful

    # --- questions ----------------------------------------------------------------------
    def truth(self, question: Question) -> QuestionTruth:
        """The hidden parameters of ``question`` (derived from its id and the seed)."""
        cached = self._truths.get(question.question_id)
        if cached is not None:
            return cached
        cfg = self.config.world
        rng = rng_for(self.config.seed, "question", question.question_id)
        insights = self.insights_for(question.task_type)
        k = rng.randint(cfg.needed_min, min(cfg.needed_max, len(insights)))
        truth = QuestionTruth(
            question_id=question.question_id,
            task_type=question.task_type,
            answer=question.answer,
            letters=question.letters,
            base=rng.uniform(cfg.base_min, cfg.base_max),
            gain=rng.uniform(cfg.gain_min, cfg.gain_max),
            needed=tuple(sorted(r.id for r in rng.sample(insights, k))),
        )
        truth = replace(truth, side=self._side_effects(question.question_id, insights, truth.needed))
        self._truths[question.question_id] = truth
        return truth

    def _side_effects(
        self, question_id: str, insights: Sequence[Rule], needed: Sequence[str]
    ) -> tuple[tuple[str, float], ...]:
        """The insights ``question_id`` does not need that lower it, and by how much.

        Keyed draws of their own (not the question's ``rng``), so a world without side effects
        draws every other part of a question's truth exactly as before.
        """
        cfg = self.config.world
        out = []
        for rule in insights:
            if (
                rule.id in needed
                or uniform(self.config.seed, "side", question_id, rule.id) >= cfg.side_effect_share
            ):
                continue
            u = uniform(self.config.seed, "side_size", question_id, rule.id)
            out.append((rule.id, cfg.side_effect_min + (cfg.side_effect_max - cfg.side_effect_min) * u))
        return tuple(out)

    def question(self, question_id: str) -> Question:
        """A loaded question by id; ``KeyError`` names it otherwise."""
        try:
            return self.questions[question_id]
        except KeyError:
            raise KeyError(f"question {question_id!r} is not loaded in the simulator") from None

    def find_question(self, text: str) -> Question | None:
        """The loaded question whose text and options appear in ``text`` (see matching.py)."""
        return self.index.find(text)

    # --- scoring ------------------------------------------------------------------------
    def missing_insights(self, question: Question, text: str) -> tuple[Rule, ...]:
        """The needed insights of ``question`` whose wordings are all absent from ``text``."""
        norm = normalize_text(text)
        return tuple(r for r in map(self.insight, self.truth(question).needed) if not r.present_in(norm))

    def harmful_present(self, text: str) -> tuple[Rule, ...]:
        norm = normalize_text(text)
        return tuple(rule for rule in self.harmful if rule.present_in(norm))

    def filler_effect(self, wording: str, task_type: str) -> float:
        """The fixed effect of the filler ``wording`` on ``task_type``'s questions: Normal(0, sd)."""
        sd = self.config.world.filler_effect_sd
        if sd == 0:
            return 0.0
        u = uniform(self.config.seed, "filler", normalize_text(wording), task_type)
        return sd * NormalDist().inv_cdf(_open_unit(u))

    def presence(self, text: str, task_type: str) -> Presence:
        """What ``text`` holds for ``task_type``'s questions (remembered for the last texts asked)."""
        key = (text, task_type)
        hit = self._presence_cache.get(key)
        if hit is None:
            norm = normalize_text(text)
            insights = self.insights_for(task_type)
            hit = Presence(
                insights=frozenset(r.id for r in insights if r.present_in(norm)),
                harmful=sum(1 for rule in self.harmful if rule.present_in(norm)),
                filler=sum(
                    self.filler_effect(w, task_type) for w in USELESS_RULES if normalize_text(w) in norm
                ),
                clear=frozenset(r.id for r in insights if r.restated_in(norm, "clear")),
                muddled=frozenset(r.id for r in insights if r.restated_in(norm, "muddled")),
            )
            if len(self._presence_cache) > _PRESENCE_CACHE:
                self._presence_cache.clear()
            self._presence_cache[key] = hit
        return hit

    def p_intended(self, question: Question, text: str) -> float:
        """Probability that the agent intends the right letter, given the instruction ``text``."""
        cfg = self.config.world
        truth = self.truth(question)
        seen = self.presence(text, question.task_type)
        n = len(truth.needed)
        k = sum(1 for i in truth.needed if i in seen.insights)
        share = k / n * (1 + cfg.insight_overlap * (n - k) / n)
        restated = sum((i in seen.clear) - (i in seen.muddled) for i in truth.needed)
        side = sum(size for i, size in truth.side if i in seen.insights)
        p = (
            truth.base
            + truth.gain * (share + cfg.restate_gain * restated / n)
            - side
            - cfg.harm_per_rule * seen.harmful
            + seen.filler
        )
        return min(cfg.ceiling, max(cfg.floor, p))

    def letter_kept_share(self) -> float:
        """Share of answers whose shape still encodes exactly the intended letter."""
        agent = self.config.agent
        weights = {s: w for s, w in agent.awkward_shapes.items() if s != AnswerShape.PLAIN}
        total = sum(weights.values())
        if agent.awkward_rate == 0 or total == 0:
            return 1.0
        kept = sum(w for s, w in weights.items() if s in LETTER_PRESERVING_SHAPES)
        return 1.0 - agent.awkward_rate * (1.0 - kept / total)

    def plan_completion_share(self, path: AgentPath) -> float:
        """Share of tool-using episodes whose plan leaves a turn for ``submit_answer``.

        The plan is ``get_frames`` (when offered), a second one with ``extra_frames_rate``, then
        ``get_subtitles`` (when offered) with ``subtitles_rate``; the role follows it whatever the
        harness says on its last turn, so a plan of ``max_steps`` calls or more runs out of turns
        and the harness scores no answer (``StepBudgetExhausted``).
        """
        agent = self.config.agent
        extra = agent.extra_frames_rate
        frames = [(1, 1.0 - extra), (2, extra)] if path.frames else [(0, 1.0)]
        rate = agent.subtitles_rate
        subtitles = [(0, 1.0 - rate), (1, rate)] if path.subtitles else [(0, 1.0)]
        return sum(pf * ps for nf, pf in frames for ns, ps in subtitles if nf + ns < path.max_steps)

    def resolved(self, question: Question) -> Question:
        """The question the roles take ``question`` for, from its text and options in the prompt.

        Itself, unless another loaded question's text and options all appear in its own and are more
        specific (matching.py): then the role answers that one, with its answer and its truth. The
        synthetic benchmark's templates ask some questions, options and all, about several videos.
        """
        block = "\n".join([question.question, *question.options])
        return self.find_question(block) or question

    def p_letter(self, question: Question, text: str) -> float:
        """Probability that the letter the role intends is ``question``'s right one, given ``text``.

        ``p_intended`` of the question the role takes it for: when that one has another answer, the
        role is right by chance only, among its wrong letters.
        """
        asked = self.resolved(question)
        p = self.p_intended(asked, text)
        if asked.answer == question.answer:
            return p
        wrong = [x for x in asked.letters if x != asked.answer]
        return (1.0 - p) / len(wrong) if question.answer in wrong else 0.0

    def p_scored(self, question: Question, text: str, path: AgentPath | None = None) -> float:
        """Probability that the harness scores the tool-using agent right (``path.tools`` must hold).

        The intended letter is right (:meth:`p_letter`), its shape parses to it
        (:meth:`letter_kept_share`) and the plan leaves a turn to submit it
        (:meth:`plan_completion_share`): three independent draws. The plain path is the oracle's.
        """
        path = path or AgentPath()
        if not path.tools:
            raise ValueError("p_scored is the tool-using agent's; the plain path is the oracle's")
        return self.p_letter(question, text) * self.letter_kept_share() * self.plan_completion_share(path)

    def correct_draw(self, question: Question, own: float, *sample: object) -> float:
        """The uniform that decides correctness: ``own`` (the episode's), coupled to the video's.

        With ``world.video_correlation`` rho > 0 it is ``Phi(sqrt(rho) Z_video + sqrt(1 - rho) Phi^-1(own))``,
        where ``Z_video`` is one normal per (video, ``sample``): still uniform, so each question's
        accuracy is unchanged, but the questions of one video move together (a Gaussian copula).
        """
        rho = self.config.world.video_correlation
        if rho == 0:
            return own
        normal = NormalDist()
        shared = normal.inv_cdf(_open_unit(uniform(self.config.seed, "video", question.video_id, *sample)))
        mixed = math.sqrt(rho) * shared + math.sqrt(1 - rho) * normal.inv_cdf(_open_unit(own))
        return normal.cdf(mixed)

    def seed_coupled(self, question: Question, own: float, seed: object, temperature: object) -> float:
        """The uniform of an episode sampled with request ``seed``: shared across instruction texts
        with probability ``world.seed_coupling``, else ``own`` (the text's).

        Both the switch and the shared uniform are keyed on (question, seed, temperature), never on
        the text, so two arms asked with one seed take the shared uniform together or not at all:
        their correctness differs on a share ``rho |p1 - p2| + (1 - rho) (p1 (1 - p2) + p2 (1 - p1))``
        of draws. Either way the uniform stays uniform, so each arm's accuracy is unchanged.
        """
        rho = self.config.world.seed_coupling
        if seed is None or rho == 0:
            return own
        key = (self.config.seed, "seed_coupling", question.question_id, seed, temperature)
        return uniform(*key, "shared") if uniform(*key, "switch") < rho else own
