"""``skillharness sim serve | oracle | config``: the simulated model (a simulator, always called one)."""

from __future__ import annotations

import json
import socket
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

import typer
import yaml
from pydantic import ValidationError

from skillharness.data.config import DEFAULT_BENCHMARK
from skillharness.errors import ConfigError, InfraError
from skillharness.util import strict_yaml
from skillharness.util.model import describe_validation

sim_app = typer.Typer(
    help="The simulated OpenAI-compatible model (known ground truth, faults, oracle). Not a real model.",
    no_args_is_help=True,
)


_BENCHMARK = typer.Option(
    "--benchmark", help="Layout of --questions: a built-in adapter (docs/data.md) or an adapter .yaml."
)


def load_sim_config(world: Path | None, seed: int | None) -> Any:
    """SimConfig from ``--world FILE`` (YAML or JSON); ``--seed`` overrides it only when given."""
    from skillharness.sim.config import SimConfig

    data: dict[str, Any] = {}
    if world is not None:
        if world.is_dir():
            raise ConfigError(
                f"--world {world} is a folder; name the world's YAML or JSON file", file=str(world)
            )
        if not world.is_file():
            raise ConfigError(f"--world file not found: {world}", file=str(world))
        try:
            data = strict_yaml.safe_load(world.read_text(encoding="utf-8")) or {}
        except yaml.YAMLError as exc:
            raise ConfigError(f"{world}: not valid YAML/JSON: {exc}", file=str(world)) from exc
        if not isinstance(data, dict):
            raise ConfigError(f"{world}: the top level must be a mapping of SimConfig keys", file=str(world))
    if seed is not None:
        data["seed"] = seed
    try:
        return SimConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(f"{world or 'sim config'}: {describe_validation(exc)}", file=str(world)) from exc


@sim_app.command("serve")
def serve(
    host: Annotated[str, typer.Option("--host", help="Interface to bind.")] = "127.0.0.1",
    port: Annotated[
        int, typer.Option("--port", min=0, max=65535, help="TCP port (0 = any free port).")
    ] = 8000,
    seed: Annotated[
        int | None, typer.Option("--seed", help="World and sampling seed (overrides --world).")
    ] = None,
    world: Annotated[
        Path | None, typer.Option("--world", help="YAML/JSON SimConfig (latency, faults, rates...).")
    ] = None,
    questions: Annotated[
        Path | None,
        typer.Option("--questions", help="Questions file (or per-task folder) the agent role knows."),
    ] = None,
    benchmark: Annotated[str, _BENCHMARK] = DEFAULT_BENCHMARK,
) -> None:
    """Serve the simulator at http://HOST:PORT/v1 until interrupted."""
    import uvicorn

    from skillharness.sim.runner import build_state
    from skillharness.sim.server import create_app

    config = load_sim_config(world, seed)
    state = build_state(config, questions, benchmark)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise InfraError(f"cannot bind {host}:{port}: {exc}") from exc
    # Listen before the banner names the URL: a client reading it may connect at once, and a socket
    # that is bound but not listening refuses it (the server itself starts a moment later).
    sock.listen(2048)
    bound = sock.getsockname()[1]
    n_questions = len(state.responder.world.questions)  # type: ignore[attr-defined]
    typer.echo(
        f"skillharness SIMULATOR (a simulated model with a known ground truth, not a real model)\n"
        f"  serving {', '.join(config.model_names)} at http://{host}:{bound}/v1  seed={config.seed}  "
        f"questions={n_questions}\n  stats: http://{host}:{bound}/sim/stats  oracle: /sim/oracle",
        err=True,
    )
    if n_questions == 0:
        typer.echo(
            "  warning: no --questions given; the agent role refuses every question (HTTP 404).", err=True
        )
    server = uvicorn.Server(
        uvicorn.Config(create_app(state), log_level="warning", lifespan="off", timeout_graceful_shutdown=5)
    )
    server.run(sockets=[sock])


@sim_app.command("oracle")
def oracle(
    questions: Annotated[Path, typer.Option("--questions", help="Questions file (or per-task folder).")],
    bundle: Annotated[
        Path | None, typer.Option("--bundle", help="Bundle folder (default: the packaged initial one).")
    ] = None,
    after: Annotated[
        Path | None, typer.Option("--after", help="A second bundle folder: report the true effect.")
    ] = None,
    seed: Annotated[int | None, typer.Option("--seed", help="World seed (overrides --world).")] = None,
    world: Annotated[Path | None, typer.Option("--world", help="YAML/JSON SimConfig.")] = None,
    question_ids: Annotated[
        Path | None, typer.Option("--ids", help="File with one question id per line (a pool).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
    benchmark: Annotated[str, _BENCHMARK] = DEFAULT_BENCHMARK,
) -> None:
    """Print the simulator's scored truth of a bundle (ground truth, simulator only).

    The scored truth is the exact probability that the harness scores an answer right, for the
    tool-using agent with every tool and six turns; the intended-letter accuracy comes with it.
    """
    from skillharness.data import read_questions
    from skillharness.sim.oracle import Oracle
    from skillharness.sim.world import World
    from skillharness.skills.bundle import Bundle, initial_bundle

    config = load_sim_config(world, seed)
    the_world = World(config, list(read_questions(questions, benchmark)))
    the_oracle = Oracle(the_world)
    ids = None if question_ids is None else _pool_ids(question_ids, the_world.questions)
    task_types = {q.task_type for q in the_world.questions.values()}
    before = Bundle.load(bundle) if bundle is not None else initial_bundle(sorted(task_types))
    result: dict[str, Any] = {
        "simulator": True,
        "seed": config.seed,
        "n": len(ids) if ids is not None else len(the_world.questions),
        "accuracy": the_oracle.expected_accuracy(before, ids),
        "intended_accuracy": the_oracle.intended_accuracy(before, ids),
        "per_task_type": the_oracle.per_task_type(before, ids),
    }
    if after is not None:
        effect = the_oracle.edit_effect(before, Bundle.load(after), ids)
        result.update(after=effect.after, delta=effect.delta)
    _print_oracle(result, as_json)


def _pool_ids(path: Path, known: Mapping[str, object]) -> list[str]:
    """The question ids of ``--ids`` (one a line), each one of the world's; none at all is an error:
    an accuracy over no question is no number."""
    if not path.is_file():
        raise ConfigError(f"--ids file not found: {path}", file=str(path))
    ids = [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    if not ids:
        raise ConfigError(f"--ids {path}: the file names no question id (one a line)", file=str(path))
    unknown = [i for i in ids if i not in known]
    if unknown:
        raise ConfigError(f"{path}: unknown question ids {unknown[:5]}", file=str(path))
    return ids


def _print_oracle(result: dict[str, Any], as_json: bool) -> None:
    if as_json:
        typer.echo(json.dumps(result, indent=2))
        return
    from rich.console import Console

    from skillharness.commands.fit_table import Col, FitTable

    table = FitTable(
        f"Simulator oracle (seed {result['seed']}, {result['n']} questions)",
        [Col("task type", "left", wrap=True), Col("scored truth")],
    )
    for task_type, value in result["per_task_type"].items():
        table.add_row(task_type, f"{value:.4f}")
    table.add_row("[b]all[/b]", f"[b]{result['accuracy']:.4f}[/b]")
    console = Console()
    table.print(console)
    console.print(
        "scored truth: the exact probability that the harness scores an answer right (tool-using agent, "
        f"every tool, six turns); intended-letter accuracy {result['intended_accuracy']:.4f}"
    )
    if "delta" in result:
        console.print(f"after: {result['after']:.4f}  true effect (scored): {result['delta']:+.4f}")


@sim_app.command("config")
def show_config(
    seed: Annotated[int | None, typer.Option("--seed")] = None,
    world: Annotated[
        Path | None, typer.Option("--world", help="Start from this file and print it resolved.")
    ] = None,
) -> None:
    """Print a complete SimConfig as YAML: a starting point for ``--world FILE``."""
    config = load_sim_config(world, seed)
    typer.echo(yaml.safe_dump(config.model_dump(mode="json"), sort_keys=False))


def register(app: typer.Typer) -> None:
    """Add the ``sim`` command group to the root app."""
    app.add_typer(sim_app, name="sim")
