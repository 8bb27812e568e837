"""Preflight: everything a training run would trip over, found before anything is spent (SPEC 4.1).

Every check runs, whatever the others found, and each problem is one :class:`Problem` naming
its check: the user fixes them all in one round instead of one per attempt. A check that cannot
run because an earlier one failed (no questions, so no coverage) or because what it asks does not
answer is *skipped*: never a second problem for the same cause, and never a pass (preflight does
not pass with it). The report's types are in :mod:`skillharness.train.preflight.report`, the
endpoint, model and seed rows in :mod:`skillharness.train.preflight.endpoint_rows`, the network
and disk probes in :mod:`skillharness.train.preflight.probes`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from skillharness.agent import Agent, LocalVideos, largest_request
from skillharness.data import (
    FrozenPools,
    Pool,
    Question,
    load_pools,
    read_questions,
    select_pool,
    source_drift,
)
from skillharness.errors import ConfigError, SkillharnessError
from skillharness.infer.runner import InferSettings, check_media, load_bundle
from skillharness.llm.roles import Role
from skillharness.llm.types import ChatRequest, ChatResponse
from skillharness.train.config import TrainConfig
from skillharness.train.preflight.endpoint_rows import endpoint_rows
from skillharness.train.preflight.gate_row import (
    draw_mode,
    guard_summary,
    reserve_summary,
    spending_summary,
    unreachable_message,
)
from skillharness.train.preflight.probes import (
    cache_problems,
    request_problems,
    salt_note,
    store_problems,
)
from skillharness.train.preflight.report import (
    CHECKS,
    CheckRow,
    CheckStatus,
    Collector,
    PreflightReport,
    Problem,
)
from skillharness.train.roles.templates import check_templates
from skillharness.train.state.caller import evolve_calls, role_sampling
from skillharness.train.state.draws import draw_temperature
from skillharness.train.validate.coverage import TrainedClasses, include_hint, plan_trained_classes
from skillharness.video.frames import FrameSampler


class _HoldoutChoice(Protocol):
    @property
    def run_holdout_eval(self) -> bool | None: ...
    @property
    def confidence(self) -> float: ...


class PreflightSettings(InferSettings, Protocol):
    """What the preflight reads: inference's sections plus training's (``Config`` is one)."""

    @property
    def train(self) -> TrainConfig: ...
    @property
    def eval(self) -> _HoldoutChoice: ...


__all__ = [
    "CHECKS",
    "CheckRow",
    "CheckStatus",
    "PreflightReport",
    "Problem",
    "run_preflight",
    "run_preflight_async",
]

_LISTED = 10  # ids named in one message before "..."


@dataclass
class _Inputs:
    """What the data check loaded, for the checks that depend on it."""

    questions: list[Question] | None = None
    pools: FrozenPools | None = None
    classes: TrainedClasses | None = None
    present: tuple[Question, ...] = ()  # the pool's questions once their media are checked present


def run_preflight(
    config: PreflightSettings, *, pool: str = Pool.VAL, endpoint_timeout_s: float | None = None
) -> PreflightReport:
    """Check ``config`` for a training run; videos are checked for ``pool``. Never stops early.
    Each endpoint probe attempt waits at most ``endpoint_timeout_s`` (unset: ``llm.timeouts.probe_s``).

    Raises ConfigError only for a bad argument (unknown pool, non-positive timeout); every problem
    with the config or what it points at is a :class:`Problem` of the report.
    """
    return asyncio.run(run_preflight_async(config, pool=pool, endpoint_timeout_s=endpoint_timeout_s))


async def run_preflight_async(
    config: PreflightSettings, *, pool: str = Pool.VAL, endpoint_timeout_s: float | None = None
) -> PreflightReport:
    """:func:`run_preflight` for a caller already inside an event loop (the training loop)."""
    chosen = Pool.named(pool)
    if endpoint_timeout_s is None:
        endpoint_timeout_s = config.llm.timeouts.probe_s
    if not endpoint_timeout_s > 0:
        raise ConfigError(f"the endpoint timeout must be > 0 seconds, got {endpoint_timeout_s!r}")
    out = Collector()
    # The file checks block (parsing, probing videos): a thread, while the probes wait on I/O.
    inputs, _ = await asyncio.gather(
        asyncio.to_thread(_file_checks, config, chosen, out), _probes(config, endpoint_timeout_s, out)
    )
    # After both: the run's largest request needs a question with its video, and an endpoint that answers.
    await _request_check(config, inputs, out)
    out.run("cache salt", lambda: salt_note(config.cache))
    return out.report()


def _file_checks(config: PreflightSettings, pool: Pool, out: Collector) -> _Inputs:
    inputs = _Inputs()
    out.run("templates", lambda: _templates(config, out))
    out.run("roles", lambda: _roles(config.train, out))
    out.run("data", lambda: _data(config, pool, inputs, out))
    out.run("gate", lambda: _gate(config, inputs, out))
    out.run("bundle", lambda: _bundle(config, inputs))
    out.run("eval", lambda: _eval(config))
    return inputs


async def _request_check(config: PreflightSettings, inputs: _Inputs, out: Collector) -> None:
    """One request of the run's size to every endpoint (probes.request_problems). Skipped, never
    passed, when it cannot be built: no question with its video, no bundle, or no endpoint answering."""
    failed = {p.check for p in out.problems}
    needs = [c for c in ("endpoint", "model", "data", "bundle") if c in failed or c in out.skipped]
    if needs or not inputs.present or config.agent.bundle is None:
        where = ", ".join(needs or ["data"])
        out.skip("request", f"needs a question with its video and an answering endpoint (see {where})")
        return
    try:
        question, request = await _largest_request(config, config.agent.bundle, inputs.present)
    except SkillharnessError as exc:
        out.fail("request", f"the run's largest request could not be built: {exc}")
        return
    problems, summary = await request_problems(config.llm, request, question.question_id)
    for message in problems:
        out.fail("request", message)
    out.summaries["request"] = summary


async def _largest_request(
    config: PreflightSettings, bundle_dir: Path, present: Sequence[Question]
) -> tuple[Question, ChatRequest]:
    """The largest request of the pool's question with the most text (among those the bundle has a
    skill for) under the run's agent settings; frames are decoded uncached: preflight keeps nothing."""
    if config.data.videos_dir is None:
        raise ConfigError("data.videos_dir is not set")
    bundle = load_bundle(bundle_dir)
    known = [q for q in present if not bundle.missing_task_types([q.task_type])]
    if not known:
        raise ConfigError(f"no question of the pool has a skill in bundle {bundle_dir}")
    question = max(known, key=lambda q: len(q.question) + sum(len(o) for o in q.options))
    frames = config.agent.frames.model_copy(update={"cache_enabled": False})
    sources = LocalVideos(FrameSampler(frames), config.data.videos_dir, config.data.subtitles_dir)
    agent = Agent(
        model=_NoModel(),
        model_name=config.llm.model,
        bundle=bundle,
        frames=sources,
        subtitles=sources if config.agent.subtitles else None,
        config=config.agent,
        benchmark=config.data.benchmark,
        media=config.llm.media,
    )
    return question, await largest_request(agent, question)


class _NoModel:
    """The model of an agent that only builds a request (preflight sends it through its own stack)."""

    async def complete(self, request: ChatRequest) -> ChatResponse:
        raise ConfigError("preflight's agent builds requests only")


async def _probes(config: PreflightSettings, timeout_s: float, out: Collector) -> None:
    """The endpoint (with model and seed), store and cache probes, concurrently (each waits on I/O)."""
    _, store, cache = await asyncio.gather(
        endpoint_rows(config.llm, config.agent.sampling, config.train.roles, timeout_s, out),
        asyncio.to_thread(store_problems, config.store),
        cache_problems(config.cache),
    )
    for check, (problems, summary) in {"store": store, "cache": cache}.items():
        for message in problems:
            out.fail(check, message)
        out.summaries[check] = summary


def _templates(config: PreflightSettings, out: Collector) -> str:
    messages = check_templates(config.train.prompts_dir)
    key = " (train.prompts_dir)" if config.train.prompts_dir is not None else ""  # the setting to fix
    for message in messages:
        out.fail("templates", message + key)
    return f"every template loads and renders ({config.train.prompts_dir or 'packaged prompts'})"


def _roles(train: TrainConfig, out: Collector) -> str:
    """How many evolve candidates a target gets; a warning when more were asked for in vain."""
    wanted = train.evolve.candidates
    sampling = role_sampling(train.roles, Role.EVOLVE)
    calls = evolve_calls(train)
    how = f"temperature {sampling.temperature:g}" + (
        f", seed {sampling.seed}" if sampling.seed is not None else ""
    )
    summary = f"evolve: {calls} candidate(s) per target ({how})"
    if train.evolve.rank == "auto":
        summary += (
            f" once a rank trial of {train.evolve.rank_trial_tests} closed tests trusts the rank role "
            "(one proposal each until then, tested as proposed, the rank role asked beside it); one, "
            "unranked, if it does not"
        )
    elif train.evolve.rank:
        summary += "; the rank role " + (
            "picks one or declines them all" if train.evolve.rank_may_decline else "picks one"
        )
    elif calls > 1:
        summary += "; the first valid one is tested (train.evolve.rank is off)"
    if calls < wanted:
        why = "has a fixed seed" if sampling.seed is not None else "samples at temperature 0"
        out.warn(
            "roles",
            f"{summary}; train.evolve.candidates={wanted} but the evolve role {why}: a server answers "
            "one prompt alike, so one candidate is asked and none is chosen among; set "
            f"train.roles.evolve.temperature above 0 (no seed) for {wanted} distinct candidates, or "
            "train.evolve.candidates to 1",
        )
    return summary


def _data(config: PreflightSettings, pool: Pool, inputs: _Inputs, out: Collector) -> str:
    data = config.data
    if data.questions is None:
        out.fail("data", "data.questions is not set: name the questions file")
    else:
        try:
            inputs.questions = list(read_questions(data.questions, data.benchmark))
        except SkillharnessError as exc:
            out.fail("data", str(exc))
    if data.pools is None:
        out.fail("data", "data.pools is not set: training needs a frozen split (`skillharness split`)")
    else:
        try:
            inputs.pools = load_pools(data.pools, data.pools_sha256)
        except SkillharnessError as exc:
            out.fail("data", str(exc))
    if inputs.questions is None or inputs.pools is None:
        return f"{data.questions} and {data.pools} load"
    if (drift := source_drift(data.pools, data.questions)) is not None:
        out.fail("data", drift)
    by_id = {q.question_id: q for q in inputs.questions}
    selected: dict[Pool, tuple[Question, ...]] = {}
    for name in Pool:
        try:
            selected[name] = select_pool(by_id, inputs.pools, name, data.questions)
        except SkillharnessError as exc:
            out.fail("data", str(exc))
    videos = _pool_media(config, selected, out)
    if pool in videos:
        inputs.present = selected[pool]
    sizes = ", ".join(f"{n} {len(inputs.pools.questions[n])}" for n in Pool)
    sha = "matches data.pools_sha256" if data.pools_sha256 else "data.pools_sha256 not set"
    opened = ", ".join(f"{n} {count}" for n, count in videos.items())
    return f"{len(inputs.questions)} questions; pools {sizes} ({sha}); videos open whole ({opened})"


def _pool_media(
    config: PreflightSettings, selected: dict[Pool, tuple[Question, ...]], out: Collector
) -> dict[Pool, int]:
    """Every pool's videos present and whole, and their subtitles parsed: a broken train video would
    stop training at its rollout, a broken test video the holdout. A test video is opened like any
    (header and last packet, see ``check_media``): no question of it is asked, no answer read.
    Returns how many videos of each pool passed."""
    passed: dict[Pool, int] = {}
    for name, questions in selected.items():
        try:
            check_media(config.data, questions, subtitles=config.agent.subtitles)
        except SkillharnessError as exc:
            out.fail("data", f"pool {name}: {exc}")
        else:
            passed[name] = len({q.videoID for q in questions})
    return passed


def _gate(config: PreflightSettings, inputs: _Inputs, out: Collector) -> str | None:
    if inputs.questions is None or inputs.pools is None:
        out.skipped["gate"] = "needs the questions and pools (see data)"
        return None
    temperature = draw_temperature(config.agent.sampling)
    classes = inputs.classes = plan_trained_classes(inputs.questions, inputs.pools, config.train, temperature)
    if classes.unknown:
        out.fail(
            "gate", f"train.task_types names task types not in the questions file: {_ids(classes.unknown)}"
        )
    if not classes.explicit and not classes.trained:
        hint = include_hint(classes.excluded_micro)
        out.fail(
            "gate",
            "no task type can be trained: every class is micro; enlarge the val pool or re-split"
            + (f", or {hint}" if hint else ""),
        )
    for c in classes.trained:
        if not c.reachable:
            out.fail("gate", unreachable_message(c, config.train.gate))
        if c.train == 0:
            out.fail("gate", f"trained class {c.task_type!r} has no train question to learn from")
    trained = ", ".join(f"{c.task_type} (val {c.val})" for c in classes.trained)
    excluded = "; ".join(f"{c.task_type}: {c.reason()}" for c in classes.excluded_micro)
    source = "train.task_types" if classes.explicit else "all non-micro task types"
    summary = f"trained ({source}): {trained}; {draw_mode(temperature, config.train.gate)}"
    summary += reserve_summary(inputs.questions, inputs.pools, config.train.gate)
    if excluded:
        summary += f"; micro classes left out: {excluded}"
        hint = include_hint(classes.excluded_micro)
        summary += f" ({hint})" if hint else ""
    summary += spending_summary(classes, config.train.gate)
    summary += guard_summary(inputs.questions, inputs.pools, config.train.gate, temperature)
    few = [f"{c.task_type}: {c.reason()}" for c in classes.trained if c.few_distinct]
    if few:
        out.warn(
            "gate",
            f"{summary}; micro classes trained because train.task_types names them ({'; '.join(few)}): "
            "their accepts are claims about very few questions, reported apart, and only the holdout "
            "can say whether they generalize",
        )
    return summary


def _bundle(config: PreflightSettings, inputs: _Inputs) -> str:
    if config.agent.bundle is None:
        raise ConfigError("agent.bundle is not set: name a bundle folder (see `skillharness bundle init`)")
    bundle = load_bundle(config.agent.bundle)
    if inputs.classes is None:
        return f"{config.agent.bundle} loads ({len(bundle.skills)} skills); trained task types unknown"
    missing = bundle.missing_task_types(inputs.classes.names)
    if missing:
        raise ConfigError(
            f"bundle {config.agent.bundle} has no skill for trained task type(s): {_ids(missing)}",
            file=str(config.agent.bundle),
        )
    return (
        f"{config.agent.bundle} loads; a skill for each of the {len(inputs.classes.names)} trained task types"
    )


def _eval(config: PreflightSettings) -> str:
    if config.eval.run_holdout_eval is None:
        raise ConfigError(
            "eval.run_holdout_eval is not set: decide it before training. true: when training ends, the "
            "final and the baseline bundle run on the test pool (each question once per eval.samples) and "
            "the report gives both with intervals, the paired gain and McNemar, against the val gain. "
            "false: training never reads the test pool (you can still run `skillharness eval --run RUN` "
            "later; every read of the test pool is recorded and counted)"
        )
    if config.eval.run_holdout_eval:
        return "eval.run_holdout_eval = true: final and baseline run on the test pool when training ends"
    return "eval.run_holdout_eval = false: training never reads the test pool"


def _ids(values: Sequence[str]) -> str:
    return ", ".join(values[:_LISTED]) + (f" ... ({len(values)} in all)" if len(values) > _LISTED else "")
