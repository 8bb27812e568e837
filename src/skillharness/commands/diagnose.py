"""``skillharness diagnose``: the diagnosis waterfall, offline, on a finished run.

Read-only on the run (its predictions and traces); the verdicts go into the ``diagnoses`` table
under their fingerprints, so a second call costs no judge call. When the endpoint is the
simulator (it answers ``POST /sim/oracle``), the judge's ``defect`` is scored against the truth.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import typer
from rich.console import Console
from rich.markup import escape

from skillharness.commands.fit_table import Col, FitTable
from skillharness.config import Config, load_config
from skillharness.errors import ConfigError
from skillharness.skills import Bundle
from skillharness.store import RunKind, RunProvenance, RunReader
from skillharness.train import (
    COLUMNS,
    JUDGED,
    Cause,
    DiagnosisReport,
    RenderedPrompt,
    build_case_packs,
    defect_confusion,
    evolve_calls,
    open_training,
    render_evolve_prompts,
    run_waterfall,
    waterfall_table,
)

_ORACLE_TIMEOUT_S = 10.0


def _check_diagnosable(provenance: RunProvenance) -> None:
    """Refuse, before the bundle is checked, a run whose answers diagnosis must not or cannot read: a
    test-pool run (the sealed holdout), or a training run (its answers are in its child runs; its own
    empty waterfall would read as "no wrong answer")."""
    run_id = provenance.run_id
    if provenance.pool == "test":
        raise ConfigError(
            f"run {run_id!r} answered the test pool: diagnosis never reads the sealed holdout", run_id=run_id
        )
    if provenance.kind is RunKind.TRAIN:
        raise ConfigError(
            f"run {run_id!r} is a training run: its answers are stored in its child runs, not under its own "
            f"id; diagnose one of them, e.g. its baseline {run_id}.baseline or a rollout "
            f"{run_id}.e1s0.roll (`skillharness runs list` lists them)",
            run_id=run_id,
        )


def _bundle(config: Config, bundle_dir: Path | None, expected_hash: str, run_id: str) -> Bundle:
    folder = bundle_dir or config.agent.bundle
    if folder is None:
        raise ConfigError("diagnose needs the run's bundle: set agent.bundle or pass --bundle DIR")
    bundle = Bundle.load(folder)
    if bundle.bundle_hash != expected_hash:
        raise ConfigError(
            f"the bundle in {folder} is not the one run {run_id!r} answered with (hash "
            f"{bundle.bundle_hash[:12]} vs {expected_hash[:12]}): the judge must see the text the agent had; "
            "pass that bundle with --bundle DIR",
            bundle=str(folder),
            run_id=run_id,
        )
    return bundle


async def _diagnose(
    config: Config, bundle: Bundle, run_id: str, *, evolve_prompts: bool = False
) -> tuple[DiagnosisReport, list[RenderedPrompt]]:
    with RunReader(config.store) as reader:
        predictions = reader.predictions(run_id)
    async with open_training(config, bundle, run_id=f"{run_id}.diagnose") as ctx:
        report = await run_waterfall(ctx, bundle, run_id, predictions)
        if not evolve_prompts:
            return report, []
        # The prompts a training step would send for these case packs; no evolve or rank call.
        packs = build_case_packs(
            report.diagnoses, max_cases=ctx.config.casepack.max_cases, seed=ctx.config.seed, salt=run_id
        )
        return report, await render_evolve_prompts(ctx, bundle, packs)


def _oracle_missing(config: Config, bundle: Bundle, question_ids: list[str]) -> dict[str, list[str]] | None:
    """Per question, the needed insights its skill lacks, if the endpoint is the simulator; else None."""
    root = config.llm.endpoints[0].base_url.rstrip("/").removesuffix("/v1")
    payload = {
        "bundle": {"skills": {slug: doc.render() for slug, doc in bundle.skills.items()}},
        "question_ids": question_ids,
        "missing": True,
    }
    try:
        response = httpx.post(f"{root}/sim/oracle", json=payload, timeout=_ORACLE_TIMEOUT_S)
        answer = response.json() if response.status_code == 200 else None
    except (httpx.HTTPError, ValueError):
        return None
    if not isinstance(answer, dict) or answer.get("simulator") is not True or "missing" not in answer:
        return None
    return {str(qid): list(ids) for qid, ids in answer["missing"].items()}


def _truth(config: Config, bundle: Bundle, report: DiagnosisReport) -> dict[str, Any] | None:
    ids = sorted({d.case.question.question_id for d in report.diagnoses if d.cause in JUDGED})
    if not ids:
        return None
    missing = _oracle_missing(config, bundle, ids)
    return None if missing is None else defect_confusion(report.diagnoses, missing).as_dict()


def _table(run_id: str, rows: dict[str, dict[str, int]]) -> FitTable:
    columns = [Col("task type", "left", wrap=True), *(Col(title) for title, _ in COLUMNS)]
    table = FitTable(f"diagnosis of {run_id}", columns)
    for task_type, counts in rows.items():
        style = "bold" if task_type == "all" else None
        table.add_row(task_type, *(str(counts[key]) for _, key in COLUMNS), style=style)
    return table


def _percent(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def resume_command(config: Path, provenance: RunProvenance) -> str:
    """The command that asks a run's infra errors again: ``infer --resume`` for a run ``infer``
    started, ``train --resume`` of its training run for a part of one."""
    if provenance.kind is RunKind.INFER and provenance.parent_run_id is None:
        return f"skillharness infer --config {config} --resume --run-id {provenance.run_id}"
    owner = provenance.parent_run_id or provenance.run_id
    return f"skillharness train --config {config} --resume {owner}"


def _remedies(report: DiagnosisReport, resume: str) -> list[str]:
    """What mends the excluded answers: a resume for infra errors (the endpoint never answered
    them), diagnose again for failed judgements; nothing else is asked again."""
    remedies = []
    if infra := report.counts.get(Cause.INFRA.value, 0):
        remedies.append(f"fix the endpoint problem, then `{resume}` asks the {infra} infra error(s) again")
    if failed := report.counts.get(Cause.JUDGE_FAILED.value, 0):
        remedies.append(f"run diagnose again to retry the {failed} failed judgement(s)")
    return remedies


def _causes(report: DiagnosisReport, keys: tuple[str, ...] | None = None) -> str:
    """The nonzero counts of ``keys`` (default: every cause), in waterfall order: "infra 30, tool 2"."""
    shown = [(title, report.counts.get(key, 0)) for title, key in COLUMNS[1:] if keys is None or key in keys]
    return ", ".join(f"{title} {count}" for title, count in shown if count)


def no_truth_line(report: DiagnosisReport, resume: str) -> str:
    """Why there is no simulator truth: not the simulator, no wrong answer, or none judged (then why,
    and what would let them be judged)."""
    wrong = report.counts.get("wrong", 0)
    if any(report.counts.get(cause.value, 0) for cause in JUDGED):
        return "simulator truth: not available (the endpoint is not the simulator)"
    if wrong == 0:
        return "simulator truth: not available (the run has no wrong answer to judge)"
    if report.counts.get(Cause.INFRA.value, 0) == wrong:
        why = f"all {wrong} wrong answers are infra errors, which the model never answered"
    else:
        why = f"of {wrong} wrong answers, {_causes(report)}"
    return (
        f"simulator truth: not available (nothing was judged: {'; '.join([why, *_remedies(report, resume)])})"
    )


def excluded_line(report: DiagnosisReport, limit: float, resume: str) -> str:
    """The excluded share over ``limit``: what was excluded, and what mends it."""
    excluded = _causes(report, tuple(cause.value for cause in Cause if cause.excluded))
    return (
        f"excluded share {report.excluded_share:.0%} > {limit:.0%}: a training step would stop here "
        f"({'; '.join([excluded, *_remedies(report, resume)])})"
    )


def _print(
    console: Console,
    run_id: str,
    report: DiagnosisReport,
    truth: dict[str, Any] | None,
    limit: float,
    resume: str,
) -> None:
    _table(run_id, waterfall_table(report)).print(console)
    console.print(f"judge calls: {report.judge_calls}, fingerprint hits: {report.fingerprint_hits}")
    if report.judge_calls == 0 and report.fingerprint_hits:
        console.print("no judge call: every judged case was found under its fingerprint")
    if truth is None:
        console.print(no_truth_line(report, resume), markup=False, highlight=False)
    else:
        console.print(
            f"simulator truth over {truth['n']} judged cases: defect precision "
            f"{_percent(truth['precision'])}, recall {_percent(truth['recall'])} "
            f"(tp {truth['true_positive']}, fp {truth['false_positive']}, "
            f"fn {truth['false_negative']}, tn {truth['true_negative']})"
        )
    if report.excluded_share > limit:
        console.print(escape(excluded_line(report, limit, resume)), style="bold red", highlight=False)


def diagnose(
    config: Path = typer.Option(..., "--config", help="Experiment YAML (its pools, store, endpoint, judge)."),
    run: str = typer.Option(..., "--run", help="The finished run to diagnose (train or val pool)."),
    bundle_dir: Path | None = typer.Option(
        None, "--bundle", help="The run's bundle folder (default: agent.bundle of the config)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
    evolve_prompts: bool = typer.Option(
        False,
        "--evolve-prompts",
        help="Also print the evolve prompts a training step would send for these case packs (a dry "
        "run: no evolve or rank call is made).",
    ),
) -> None:
    """Diagnose a run's wrong answers; print the waterfall per task type (and the simulator truth)."""
    cfg = load_config(config)
    with RunReader(cfg.store) as reader:
        provenance = reader.run(run).provenance
    _check_diagnosable(provenance)
    bundle = _bundle(cfg, bundle_dir, provenance.bundle_hash, run)
    report, prompts = asyncio.run(_diagnose(cfg, bundle, run, evolve_prompts=evolve_prompts))
    truth = _truth(cfg, bundle, report)
    limit = cfg.train.diagnosis.max_excluded_share
    if as_json:
        doc = {
            "run_id": run,
            "waterfall": waterfall_table(report),
            "judge_calls": report.judge_calls,
            "fingerprint_hits": report.fingerprint_hits,
            "excluded_share": report.excluded_share,
            "max_excluded_share": limit,
            "truth": truth,
            "evolve_prompts": [{"template": p.name, "system": p.system, "user": p.user} for p in prompts],
        }
        typer.echo(json.dumps(doc, indent=2))
        return
    console = Console()  # the waterfall is a FitTable: at 80 columns (or a pipe) it continues below
    _print(console, run, report, truth, limit, resume_command(config, provenance))
    calls = evolve_calls(cfg.train)
    for prompt in prompts:
        console.rule(f"evolve prompt ({prompt.name}), sent {calls} time(s)")
        console.print(prompt.system, markup=False, highlight=False)
        console.print(prompt.user, markup=False, highlight=False)


def register(app: typer.Typer) -> None:
    app.command("diagnose")(diagnose)
