"""The preflight rows of what the endpoints answer: ``endpoint``, ``model`` and ``seed``.

The endpoints are probed first (``GET /models`` and a 1-token request); the model names and the
per-draw seed are then checked on the endpoints that answered. A check that could not be asked of
an endpoint (it does not answer) is *skipped* on it, with the reason, and never reported as a pass.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence

from skillharness.llm.config import LLMConfig
from skillharness.llm.served import Served, ServedVerdict, served_verdict
from skillharness.llm.types import SamplingParams
from skillharness.train.config import RoleSettings
from skillharness.train.preflight.probes import EndpointAnswer, probe_endpoints, seed_findings
from skillharness.train.preflight.report import Collector
from skillharness.train.state.caller import run_models

__all__ = ["endpoint_rows", "seed_note"]


async def endpoint_rows(
    llm: LLMConfig,
    sampling: SamplingParams,
    roles: Mapping[str, RoleSettings],
    timeout_s: float,
    out: Collector,
) -> None:
    """Probe every endpoint, then check the run's model names and the per-draw seed on those that answered."""
    answers = await probe_endpoints(llm, timeout_s)
    for answer in answers:
        if answer.problem is not None:
            out.fail("endpoint", answer.problem)
    out.summaries["endpoint"] = f"{len(answers)} endpoint(s) answer GET /models" + (
        f" and a 1-token request as {llm.model!r}" if all(_asked(a, llm.model) for a in answers) else ""
    )
    dead = [a.endpoint.label for a in answers if not a.answered]
    await asyncio.gather(
        _model_row(llm, answers, run_models(llm.model, roles), timeout_s, dead, out),
        _seed_row(llm, sampling, answers, timeout_s, dead, out),
    )


def _asked(answer: EndpointAnswer, model: str) -> bool:
    """Whether the endpoint probe sent its 1-token request (not when the listing lacks the model)."""
    return answer.listing is not None and (not answer.listing.known or model in answer.listing.ids)


def _not_run(dead: Sequence[str]) -> str:
    return f"not run on {', '.join(dead)}: it does not answer (see endpoint)"


async def _model_row(
    llm: LLMConfig,
    answers: Sequence[EndpointAnswer],
    models: Mapping[str, str],
    timeout_s: float,
    dead: Sequence[str],
    out: Collector,
) -> None:
    """Each model name of the run (``models``: name to setting) against each answering endpoint."""
    verdicts: list[ServedVerdict] = await asyncio.gather(
        *(
            served_verdict(llm, a.endpoint, a.listing, name, timeout_s, ask_unlisted=True)
            for a in answers
            if a.listing is not None
            for name in models
        )
    )
    for verdict in verdicts:
        if verdict.served is Served.REFUSED:
            setting = models[verdict.model]
            out.fail(
                "model",
                f"model {verdict.model!r} ({setting}) is not served: {verdict.message}. Set {setting} "
                "to a name the server serves",
            )
    if dead:
        out.skip("model", _not_run(dead))
        return
    unchecked = [v.message for v in verdicts if v.served is Served.UNCHECKED]
    if unchecked:
        out.warn("model", "; ".join(unchecked))
        return
    names = ", ".join(f"{name!r} ({setting})" for name, setting in models.items())
    answered = [v.message for v in verdicts if v.served is Served.ANSWERED]
    out.summaries["model"] = f"{len(answers)} endpoint(s) serve {names}" + (
        f" ({'; '.join(answered)})" if answered else ": each lists it on GET /models"
    )


async def _seed_row(
    llm: LLMConfig,
    sampling: SamplingParams,
    answers: Sequence[EndpointAnswer],
    timeout_s: float,
    dead: Sequence[str],
    out: Collector,
) -> None:
    """The per-draw seed probe on the endpoints that answered; not run (never passed) on the others."""
    if not sampling.per_draw or not sampling.temperature:
        out.summaries["seed"] = seed_note(sampling, ())
        return
    alive = tuple(a.endpoint for a in answers if a.answered)
    findings = await seed_findings(llm, sampling, timeout_s, alive)
    if dead:
        out.skip("seed", _not_run(dead))
    elif findings.failed:
        why = "; ".join(f"{label}: {error}" for label, error in findings.failed.items())
        out.skip("seed", f"not run: the seed probe could not ask {why}")
    elif findings.ignoring:
        out.warn("seed", seed_note(sampling, findings.ignoring))
    else:
        out.summaries["seed"] = seed_note(sampling, ())


def seed_note(sampling: SamplingParams, ignoring: Sequence[str]) -> str:
    """What the per-draw seed check found; endpoints that ignore the seed are a warning, not a problem
    (training falls back to independent arms by itself)."""
    if not sampling.per_draw or not sampling.temperature:
        return "no per-draw seed is sent: both arms of a paired draw are sampled independently"
    if ignoring:
        return (
            f"{', '.join(ignoring)} ignore(s) the request seed: one seed per draw couples "
            "nothing there, so training falls back to independent arms (agent.sampling.seed: null) and "
            "says so; the gate then needs about a third more draws"
        )
    return "one seed per draw (agent.sampling.seed per_draw): the endpoints answered one seed alike"
