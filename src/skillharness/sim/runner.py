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
import socket
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import uvicorn

from skillharness.data.questions import Question
from skillharness.errors import InfraError
from skillharness.llm.roles import Role
from skillharness.sim.config import FaultConfig, FaultKind, SimConfig
from skillharness.sim.model import SimModel
from skillharness.sim.oracle import Oracle
from skillharness.sim.server import SimState, create_app
from skillharness.sim.world import World

__all__ = ["SimServer", "build_state", "run_sim_server"]

_START_TIMEOUT_S = 15.0


def build_state(config: SimConfig, questions: Sequence[Question] | Path | str | None = None) -> SimState:
    """The shared state (world, roles, oracle, stats, faults) for ``config`` and ``questions``."""
    if isinstance(questions, str | Path):
        from skillharness.data.loader import load_questions

        questions = load_questions(questions)
    model = SimModel(config, list(questions or ()))
    return SimState(config, model, model.oracle)


class SimServer:
    """A running simulator; a context manager (sync or async) that starts and stops it."""

    def __init__(
        self,
        config: SimConfig | None = None,
        *,
        questions: Sequence[Question] | Path | str | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.config = config or SimConfig()
        self.state = build_state(self.config, questions)
        self.host = host
        self._port = port
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    # --- lifecycle -----------------------------------------------------------------------
    def start(self) -> SimServer:
        """Bind, start serving in a daemon thread, and return once the server accepts requests."""
        # proto=IPPROTO_TCP matters: asyncio only sets TCP_NODELAY on sockets that say TCP, and
        # without it every split response waits ~40 ms for a delayed ACK (Nagle).
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((self.host, self._port))
        except OSError as exc:
            sock.close()
            raise InfraError(f"simulator cannot bind {self.host}:{self._port}: {exc}") from exc
        self._port = sock.getsockname()[1]
        config = uvicorn.Config(
            create_app(self.state),
            log_level="warning",
            access_log=False,
            lifespan="off",
            timeout_keep_alive=30,
            timeout_graceful_shutdown=2,
            limit_concurrency=None,
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [sock]}, name="skillharness-sim", daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + _START_TIMEOUT_S
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise InfraError(f"simulator did not start on {self.host}:{self._port}")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        """Ask uvicorn to exit and wait for its thread."""
        if self._server is not None and self._thread is not None:
            self._server.should_exit = True
            self._thread.join(timeout=10)
        self._server = None
        self._thread = None

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
    config: SimConfig | None = None, questions: Sequence[Question] | Path | str | None = None
) -> SimServer:
    """A not-yet-started :class:`SimServer`; use it as ``with run_sim_server(cfg) as sim:``."""
    return SimServer(config, questions=questions)
