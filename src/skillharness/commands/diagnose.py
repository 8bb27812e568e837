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

from skillharness.commands.fit_table import Col, FitTable
from skillharness.config import Config, load_config
from skillharness.errors import ConfigError
from skillharness.skills import Bundle
from skillharness.store import RunReader
from skillharness.train import (
    COLUMNS,
    JUDGED,
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
        info = reader.run(run_id)
        if info.provenance.pool == "test":
            raise ConfigError(
                f"run {run_id!r} answered the test pool: diagnosis never reads the sealed holdout",
                run_id=run_id,
            )
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


def _print(
    console: Console, run_id: str, report: DiagnosisReport, truth: dict[str, Any] | None, limit: float
) -> None:
    _table(run_id, waterfall_table(report)).print(console)
    console.print(f"judge calls: {report.judge_calls}, fingerprint hits: {report.fingerprint_hits}")
    if report.judge_calls == 0 and report.fingerprint_hits:
        console.print("no judge call: every judged case was found under its fingerprint")
    if truth is None:
        console.print(
            "simulator truth: not available (the endpoint is not the simulator, or nothing was judged)"
        )
    else:
        console.print(
            f"simulator truth over {truth['n']} judged cases: defect precision "
            f"{_percent(truth['precision'])}, recall {_percent(truth['recall'])} "
            f"(tp {truth['true_positive']}, fp {truth['false_positive']}, "
            f"fn {truth['false_negative']}, tn {truth['true_negative']})"
        )
    if report.excluded_share > limit:
        console.print(
            f"[bold red]excluded share {report.excluded_share:.0%} > {limit:.0%}[/]: a training step would "
            "stop here (run diagnose again to retry the failed judgements)"
        )


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
        expected = reader.run(run).provenance.bundle_hash
    bundle = _bundle(cfg, bundle_dir, expected, run)
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
    console = Console(width=max(Console().width, 120))
    _print(console, run, report, truth, limit)
    calls = evolve_calls(cfg.train)
    for prompt in prompts:
        console.rule(f"evolve prompt ({prompt.name}), sent {calls} time(s)")
        console.print(prompt.system, markup=False, highlight=False)
        console.print(prompt.user, markup=False, highlight=False)


def register(app: typer.Typer) -> None:
    app.command("diagnose")(diagnose)
