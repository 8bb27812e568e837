"""Run the simulator in-process: uvicorn on a free loopback port in a background thread.

Usable from any test and from the demo::

    with SimServer(SimConfig(seed=1), questions=qs) as sim:
        client = OpenAI(base_url=sim.base_url, api_key="x")
        sim.force_fault(FaultKind.TRUNCATE)        # the next request's stream is cut
        ...
        assert sim.stats()["faults"]["truncate"] == 1

``async with SimServer(...)`` works too (the server still runs in its own thread and loop, so
it never competes with the test's event loop).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from skillharness.data.config import DEFAULT_BENCHMARK
from skillharness.data.questions import Question
from skillharness.data.selection import read_questions
from skillharness.llm.roles import Role
from skillharness.sim.config import FaultConfig, FaultKind, SimConfig
from skillharness.sim.model import SimModel
from skillharness.sim.oracle import Oracle
from skillharness.sim.server import create_app
from skillharness.sim.state import SimState
from skillharness.sim.world import World
from skillharness.util.asgi import BackgroundServer

__all__ = ["SimServer", "build_state", "run_sim_server"]


def build_state(
    config: SimConfig,
    questions: Sequence[Question] | Path | str | None = None,
    benchmark: str | Path = DEFAULT_BENCHMARK,
) -> SimState:
    """The shared state (world, roles, oracle, stats, faults) for ``config`` and ``questions``.

    A path is read through the adapter ``benchmark`` names (a file, or a folder of per-task files),
    as every stage of a run reads it: the world knows the questions the harness asks.
    """
    source = "the list given to SimServer(questions=...)"
    if isinstance(questions, str | Path):
        source = str(questions)
        questions = read_questions(questions, benchmark)
    model = SimModel(config, list(questions or ()), source=source)
    return SimState(config, model, model.oracle)


class SimServer:
    """A running simulator; a context manager (sync or async) that starts and stops it."""

    def __init__(
        self,
        config: SimConfig | None = None,
        *,
        questions: Sequence[Question] | Path | str | None = None,
        benchmark: str | Path = DEFAULT_BENCHMARK,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.config = config or SimConfig()
        self.state = build_state(self.config, questions, benchmark)
        self.host = host
        self._port = port
        self._server: BackgroundServer | None = None

    # --- lifecycle -----------------------------------------------------------------------
    def start(self) -> SimServer:
        """Bind, start serving in a daemon thread, and return once the server accepts requests."""
        self._server = BackgroundServer(
            create_app(self.state),
            host=self.host,
            port=self._port,
            name="skillharness-sim",
            timeout_keep_alive=30,
            timeout_graceful_shutdown=2,
            limit_concurrency=None,
        ).start()
        self._port = self._server.port
        return self

    def stop(self) -> None:
        """Ask uvicorn to exit and wait for its thread."""
        if self._server is not None:
            self._server.stop()
        self._server = None

    def __enter__(self) -> SimServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def __aenter__(self) -> SimServer:
        return await asyncio.to_thread(self.start)

    async def __aexit__(self, *exc: object) -> None:
        await asyncio.to_thread(self.stop)

    # --- what tests use ------------------------------------------------------------------
    @property
    def port(self) -> int:
        return self._port

    @property
    def url(self) -> str:
        """Root URL (the admin routes live under ``/sim``)."""
        return f"http://{self.host}:{self._port}"

    @property
    def base_url(self) -> str:
        """OpenAI base URL, ending in ``/v1``."""
        return f"{self.url}/v1"

    @property
    def model_name(self) -> str:
        return self.config.model_names[0]

    @property
    def model(self) -> SimModel:
        """The simulated model answering requests (world, roles, oracle)."""
        return self.state.responder  # type: ignore[return-value]

    @property
    def oracle(self) -> Oracle:
        """The oracle of this server's world."""
        return self.model.oracle

    @property
    def world(self) -> World:
        """The hidden ground truth."""
        return self.model.world

    def stats(self) -> dict[str, Any]:
        """The same counters ``GET /sim/stats`` returns."""
        return self.state.stats.snapshot()

    def reset_stats(self) -> None:
        self.state.stats.reset()

    def configure_faults(self, faults: FaultConfig | None = None, **fields: Any) -> None:
        """Replace the random fault settings: a FaultConfig, or its fields as keywords."""
        self.state.faults.configure(faults if faults is not None else FaultConfig(**fields))

    def force_fault(
        self, kind: FaultKind | str, count: int = 1, roles: tuple[Role, ...] | None = None
    ) -> None:
        """The next ``count`` requests (of ``roles``, if given) get fault ``kind``."""
        self.state.faults.force(FaultKind(kind), count, roles)

    def clear_faults(self) -> None:
        """No forced faults and no random fault rates any more."""
        self.state.faults.clear()


def run_sim_server(
    config: SimConfig | None = None,
    questions: Sequence[Question] | Path | str | None = None,
    benchmark: str | Path = DEFAULT_BENCHMARK,
) -> SimServer:
    """A not-yet-started :class:`SimServer`; use it as ``with run_sim_server(cfg) as sim:``."""
    return SimServer(config, questions=questions, benchmark=benchmark)
