"""The oracle: the exact expected accuracy of any bundle text, and the true effect of an edit.

*Bundle text* for a question of task type ``t`` is what the agent role scores::

    system_prompt + "\\n" + skills[t] + "\\n" + "\\n".join(tool_descriptions.values())

i.e. the system prompt, the question's task-type skill document (all regions, rendered) and the
tool descriptions — the same texts ``Bundle.relevant_hash(t)`` covers. Skills are keyed by slug,
as a :class:`~skillharness.skills.bundle.Bundle` keys them (a task-type name given as a key is
turned into its slug), so a bundle converts both ways without losing a skill.
The agent role scores the system messages + first user message + tool descriptions of its
request: the same text as long as the harness puts the skill in one of those messages
(question text and subtitles hold no insight wording).

The accuracy reported is the **scored truth**: the probability that the harness scores the
answer right on the run's :class:`~skillharness.sim.world.AgentPath` (tool-using or plain, which
tools are offered, the step limit). On the tool-using path that is ``p_letter(q) *
letter_kept_share * plan_completion_share`` (:meth:`World.p_scored`): the role may take a question
for another with the same text and options, the shapes ``(b)``, ``The answer is B.`` and
``{"answer": ["B"]}`` keep the intended letter while "two letters" and "no answer" are parse
errors, and a plan longer than the step limit ends unanswered. On the plain path each reply shape is
read by our normalizer (:func:`~skillharness.sim.plain.plain_expectation`). Both are exact: every
draw is its own keyed uniform. :meth:`Oracle.intended_accuracy` is the probability that the agent
*intends* the right letter, what insights move: gap closure is read on it.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import asdict
from itertools import combinations
from typing import Any

from pydantic import Field, field_validator

from skillharness.data.questions import Question, slugify
from skillharness.sim.plain import plain_expectation
from skillharness.sim.world import AgentPath, Rule, World
from skillharness.skills.bundle import Bundle
from skillharness.skills.document import SkillDocument
from skillharness.util.model import StrictModel

__all__ = ["BundleText", "EditEffect", "Oracle", "oracle_http"]


class BundleText(StrictModel):
    """The texts of a bundle, as the oracle reads them."""

    system_prompt: str = ""
    skills: dict[str, str] = Field(default_factory=dict, description="Task-type slug -> skill document.")
    tool_descriptions: dict[str, str] = Field(default_factory=dict, description="Tool name -> description.")

    @field_validator("skills")
    @classmethod
    def _slug_keys(cls, skills: dict[str, str]) -> dict[str, str]:
        # One key per skill: a name and its slug given together would be two texts for one type.
        by_slug: dict[str, str] = {}
        for key, text in skills.items():
            slug = slugify(key)
            if slug in by_slug:
                raise ValueError(f"skills name task type {slug!r} twice (by name and by slug)")
            by_slug[slug] = text
        return by_slug

    def text_for(self, task_type: str, path: AgentPath | None = None) -> str:
        """The bundle text a question of ``task_type`` (name or slug) is scored on.

        A plain request (``path.tools`` false) offers no tools, so their descriptions are not in it,
        and with the bundle left out of the prompt (``path.bundle_in_prompt`` false) nothing is.
        """
        skill = self.skills.get(slugify(task_type), "")
        if path is not None and not path.tools:
            return "\n".join([self.system_prompt, skill]) if path.bundle_in_prompt else ""
        return "\n".join([self.system_prompt, skill, *self.tool_descriptions.values()])

    def to_bundle(self, source: str = "<oracle>") -> Bundle:
        """This text as a :class:`~skillharness.skills.bundle.Bundle` the agent can run.

        Every skill must be a full skill document (its region markers intact), as
        :meth:`from_bundle` and :meth:`Oracle.best_bundle` of a bundle produce.
        """
        skills = {
            slug: SkillDocument.parse(text, source=f"{source}/{slug}") for slug, text in self.skills.items()
        }
        return Bundle(self.system_prompt, skills, dict(self.tool_descriptions), source=source)

    def with_document(self, target: str, document: str) -> BundleText:
        """These texts with ``target``'s document (``skill:slug``, ``system``, ``tools:name``) replaced."""
        kind, _, name = target.partition(":")
        if kind == "skill":
            return self.model_copy(update={"skills": {**self.skills, name: document}})
        if kind == "system":
            return self.model_copy(update={"system_prompt": document})
        return self.model_copy(update={"tool_descriptions": {**self.tool_descriptions, name: document}})

    @classmethod
    def from_bundle(cls, bundle: Bundle) -> BundleText:
        """The texts of a :class:`skillharness.skills.bundle.Bundle` (rendered skill documents)."""
        return cls(
            system_prompt=bundle.system_prompt,
            skills={slug: doc.render() for slug, doc in bundle.skills.items()},
            tool_descriptions=dict(bundle.tools),
        )


class EditEffect(StrictModel):
    """Expected accuracy before and after an edit, on one question set."""

    before: float
    after: float
    n: int

    @property
    def delta(self) -> float:
        return self.after - self.before


BundleLike = BundleText | Bundle | str | Mapping[str, Any]


def _as_bundle(bundle: BundleLike) -> BundleText:
    if isinstance(bundle, BundleText):
        return bundle
    if isinstance(bundle, Bundle):
        return BundleText.from_bundle(bundle)
    if isinstance(bundle, str):  # one text for every question
        return BundleText(system_prompt=bundle)
    if isinstance(bundle, Mapping):
        return BundleText.model_validate(dict(bundle))
    raise ValueError(f"a bundle is a text or an object of texts, not {type(bundle).__name__}")


class Oracle:
    """Ground truth for one :class:`World`."""

    def __init__(self, world: World) -> None:
        self.world = world

    def _questions(self, questions: Iterable[Question | str] | None) -> list[Question]:
        if questions is None:
            return list(self.world.questions.values())
        return [q if isinstance(q, Question) else self.world.question(q) for q in questions]

    def _scored(self, b: BundleText, question: Question, path: AgentPath) -> float:
        text = b.text_for(question.task_type, path)
        if path.tools:
            return self.world.p_scored(question, text, path)
        return plain_expectation(self.world, question, text).ours

    def question_accuracy(
        self, bundle: BundleLike, question: Question | str, path: AgentPath | None = None
    ) -> float:
        """Probability that the harness scores one sample of ``question`` right with ``bundle``."""
        q = question if isinstance(question, Question) else self.world.question(question)
        return self._scored(_as_bundle(bundle), q, path or AgentPath())

    def per_question(
        self,
        bundle: BundleLike,
        questions: Iterable[Question | str] | None = None,
        path: AgentPath | None = None,
    ) -> dict[str, float]:
        """Scored truth of every question (all loaded ones when ``questions`` is None)."""
        b, way = _as_bundle(bundle), path or AgentPath()
        return {q.question_id: self._scored(b, q, way) for q in self._questions(questions)}

    def expected_accuracy(
        self,
        bundle: BundleLike,
        questions: Iterable[Question | str] | None = None,
        path: AgentPath | None = None,
    ) -> float:
        """The scored truth: mean probability that the harness scores an answer right (0.0 if empty)."""
        values = list(self.per_question(bundle, questions, path).values())
        return sum(values) / len(values) if values else 0.0

    def intended_accuracy(
        self, bundle: BundleLike, questions: Iterable[Question | str] | None = None
    ) -> float:
        """Mean probability that the agent *intends* each question's right letter (0.0 if empty).

        What insights move, before the role misreads a question, writes an answer that does not
        parse or runs out of turns: gap closure (``best_bundle``) is read on it.
        """
        b = _as_bundle(bundle)
        values = [self.world.p_intended(q, b.text_for(q.task_type)) for q in self._questions(questions)]
        return sum(values) / len(values) if values else 0.0

    def per_task_type(
        self,
        bundle: BundleLike,
        questions: Iterable[Question | str] | None = None,
        path: AgentPath | None = None,
    ) -> dict[str, float]:
        """Mean scored truth per task type."""
        qs = self._questions(questions)
        acc = self.per_question(bundle, qs, path)
        groups: dict[str, list[float]] = defaultdict(list)
        for q in qs:
            groups[q.task_type].append(acc[q.question_id])
        return {t: sum(v) / len(v) for t, v in sorted(groups.items())}

    def edit_effect(
        self,
        before: BundleLike,
        after: BundleLike,
        questions: Iterable[Question | str] | None = None,
        path: AgentPath | None = None,
    ) -> EditEffect:
        """The true (scored) effect of changing ``before`` into ``after`` on ``questions``."""
        qs = self._questions(questions)
        return EditEffect(
            before=self.expected_accuracy(before, qs, path),
            after=self.expected_accuracy(after, qs, path),
            n=len(qs),
        )

    def plain_accuracy(
        self, text: str | Mapping[str, str], questions: Iterable[Question | str] | None = None
    ) -> dict[str, float]:
        """Expected accuracy of plain-text answers (requests without tools) under each scorer.

        ``text`` is the instruction text the requests carry (system + first user message), one for
        all questions or one per question id. ``ours``, ``lmms_eval`` and ``vlmevalkit`` count an
        unparsed answer wrong; ``official`` leaves it out, so it is expected correct over expected
        counted. Each reference reads with its own extractor.
        """
        rows = [
            plain_expectation(self.world, q, text if isinstance(text, str) else text[q.question_id])
            for q in self._questions(questions)
        ]
        if not rows:
            return {"ours": 0.0, "lmms_eval": 0.0, "vlmevalkit": 0.0, "official": 0.0}
        answered = sum(r.official_answered for r in rows)
        return {
            "ours": sum(r.ours for r in rows) / len(rows),
            "lmms_eval": sum(r.lmms_eval for r in rows) / len(rows),
            "vlmevalkit": sum(r.vlmevalkit for r in rows) / len(rows),
            "official": sum(r.official_correct for r in rows) / answered if answered else 0.0,
        }

    def best_bundle(
        self, base: BundleLike = "", questions: Iterable[Question | str] | None = None
    ) -> BundleText:
        """``base`` with, for each task type, the subset of its insights (canonical wordings appended to
        its skill) that gives ``questions`` (default: every loaded one) the highest intended accuracy.

        Without side effects (``world.side_effect_share`` 0) an insight never lowers a question, so
        the subset is every insight. With them an insight that lowers more than it raises on these
        questions is left out: the best bundle for a small pool may differ from the whole class's.
        Ties go to the larger subset. Harmful rules already in ``base`` stay: this is the best a
        pure-addition evolution of insights reaches. Filler lines with a positive effect or clear
        restatements (``world.filler_effect_sd``, ``world.restate_gain``) can add a little more, so a
        bundle may score slightly above it. Skills stay keyed by slug, so
        :meth:`BundleText.to_bundle` of the result is the bundle whose expected accuracy this oracle
        reports.
        """
        b = _as_bundle(base)
        qs = self._questions(questions)
        skills = dict(b.skills)
        for task_type in sorted({q.task_type for q in qs}):
            slug = slugify(task_type)
            chosen = self._best_subset(b, task_type, [q for q in qs if q.task_type == task_type])
            lines = [f"- {rule.canonical}" for rule in chosen]
            skills[slug] = "\n".join([skills.get(slug, ""), *lines]).strip("\n")
        return b.model_copy(update={"skills": skills})

    def _best_subset(self, b: BundleText, task_type: str, questions: list[Question]) -> tuple[Rule, ...]:
        """The insights of ``task_type`` whose addition to ``b`` maximizes the mean intended accuracy of
        ``questions`` (all of them on ties: larger subsets are tried first)."""
        rules = self.world.insights_for(task_type)
        subsets = sorted(
            (c for k in range(len(rules) + 1) for c in combinations(rules, k)), key=lambda c: -len(c)
        )
        slug = slugify(task_type)

        def value(subset: tuple[Rule, ...]) -> float:
            skill = "\n".join([b.skills.get(slug, ""), *(f"- {r.canonical}" for r in subset)])
            text = b.with_document(f"skill:{slug}", skill).text_for(task_type)
            return sum(self.world.p_intended(q, text) for q in questions)

        # max keeps the first of equal values: the largest subset, so no side effect means every insight.
        return max(subsets, key=value)


def _ids(value: Any) -> list[str] | None:
    if value is None or value == "":
        return None
    if isinstance(value, str):
        return [part for part in value.split(",") if part]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return value
    raise ValueError("question_ids must be a list of strings or a comma-separated string")


def _path(value: Any) -> AgentPath:
    """The agent path of an oracle request: an object of AgentPath's fields (a JSON text in a GET)."""
    if value is None or value == "":
        return AgentPath()
    if isinstance(value, str):
        value = json.loads(value)
    if not isinstance(value, Mapping):
        raise ValueError("path must be an object of agent path fields")
    try:
        return AgentPath(**value)
    except TypeError as exc:  # an unknown field
        raise ValueError(f"path: {exc}") from None


def oracle_http(oracle: Oracle, payload: Mapping[str, Any]) -> dict[str, Any]:
    """The ``/sim/oracle`` answer.

    ``payload``: ``text`` (one text for every question) or ``bundle`` (a BundleText object),
    optionally ``after`` (another bundle: report the edit's effect), ``question_ids`` (list or
    comma-separated; default all), ``task_type`` (filter), ``path`` (the run's agent path, an object
    of :class:`AgentPath`'s fields; default the tool-using agent with every tool and 6 turns) and
    ``missing`` (true: add, per question, the ids of its needed insights absent from its bundle
    text: the diagnosis's truth). ``accuracy``, ``per_task_type`` and ``delta`` are scored truth on
    that path; ``intended_accuracy`` is the probability of intending the right letter.
    """
    if not isinstance(payload, Mapping):
        raise ValueError("the oracle request must be a JSON object")
    path = _path(payload.get("path"))
    ids = _ids(payload.get("question_ids"))
    questions = oracle._questions(ids)
    if payload.get("task_type"):
        questions = [q for q in questions if q.task_type == payload["task_type"]]
    before = payload.get("bundle") if payload.get("bundle") is not None else str(payload.get("text", ""))
    if isinstance(before, str) and before.startswith("{"):  # a bundle passed as a GET parameter
        before = json.loads(before)
    answer: dict[str, Any] = {
        "n": len(questions),
        "accuracy": oracle.expected_accuracy(before, questions, path),
        "intended_accuracy": oracle.intended_accuracy(before, questions),
        "per_task_type": oracle.per_task_type(before, questions, path),
        "path": asdict(path),
        "simulator": True,
    }
    if payload.get("missing"):
        texts = _as_bundle(before)
        answer["missing"] = {
            q.question_id: [r.id for r in oracle.world.missing_insights(q, texts.text_for(q.task_type))]
            for q in questions
        }
    if payload.get("after") is not None:
        effect = oracle.edit_effect(before, payload["after"], questions, path)
        answer.update(after=effect.after, delta=effect.delta)
    return answer
