"""The ``/sim/*`` admin routes: stats, fault control and the oracle (never part of OpenAI's API)."""

from __future__ import annotations

from typing import Any

from pydantic import Field, ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from skillharness.llm.roles import Role
from skillharness.sim.config import FaultConfig, FaultKind
from skillharness.sim.state import SimState
from skillharness.sim.wire import error_body
from skillharness.util.model import StrictModel, describe_validation

__all__ = ["ForceFault", "admin_routes"]


class ForceFault(StrictModel):
    """Body of ``POST /sim/faults/force``: the next ``count`` requests (of ``roles``) get ``kind``."""

    kind: FaultKind
    count: int = Field(1, ge=1)
    roles: tuple[Role, ...] | None = None


def _bad(message: str) -> JSONResponse:
    return JSONResponse(error_body(message, "invalid_request_error", "invalid_request"), status_code=400)


async def _json(request: Request) -> Any:
    try:
        return await request.json()
    except ValueError as exc:
        raise ValueError(f"body is not valid JSON: {exc}") from exc


def _described(exc: ValueError) -> str:
    return describe_validation(exc) if isinstance(exc, ValidationError) else str(exc)


def admin_routes(state: SimState) -> list[Route]:
    """Routes bound to ``state``."""

    async def health(_: Request) -> JSONResponse:
        return JSONResponse({"status": "ok", "simulator": True})

    async def stats(_: Request) -> JSONResponse:
        return JSONResponse(state.stats.snapshot())

    async def stats_reset(_: Request) -> JSONResponse:
        state.stats.reset()
        return JSONResponse(state.stats.snapshot())

    async def faults(request: Request) -> JSONResponse:
        if request.method == "DELETE":
            state.faults.clear()
        elif request.method == "POST":
            try:
                state.faults.configure(FaultConfig.model_validate(await _json(request)))
            except ValueError as exc:  # malformed JSON, or a ValidationError
                return _bad(_described(exc))
        return JSONResponse(state.faults.config.model_dump(mode="json"))

    async def force(request: Request) -> JSONResponse:
        try:
            spec = ForceFault.model_validate(await _json(request))
        except ValueError as exc:  # malformed JSON, or a ValidationError
            return _bad(_described(exc))
        state.faults.force(spec.kind, spec.count, spec.roles)
        return JSONResponse(spec.model_dump(mode="json"))

    async def oracle(request: Request) -> JSONResponse:
        if state.oracle is None:
            return JSONResponse(error_body("no oracle loaded", "server_error", 500), status_code=500)
        from skillharness.sim.oracle import oracle_http

        try:
            payload = dict(request.query_params) if request.method == "GET" else await _json(request)
            return JSONResponse(oracle_http(state.oracle, payload))
        except KeyError as exc:  # an unknown question id
            return _bad(str(exc.args[0]))
        except ValueError as exc:  # malformed JSON, or a ValidationError
            return _bad(_described(exc))

    return [
        Route("/health", health, methods=["GET"]),
        Route("/sim/stats", stats, methods=["GET"]),
        Route("/sim/stats/reset", stats_reset, methods=["POST"]),
        Route("/sim/faults", faults, methods=["GET", "POST", "DELETE"]),
        Route("/sim/faults/force", force, methods=["POST"]),
        Route("/sim/oracle", oracle, methods=["GET", "POST"]),
    ]
