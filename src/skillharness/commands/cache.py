"""``skillharness cache stats|prune|clear``: look after the response cache."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

import typer

from skillharness.llm.cache.backend import CacheBackend, open_backend, redact_url
from skillharness.llm.config import CacheConfig

__all__ = ["register"]

T = TypeVar("T")

_DEFAULTS = CacheConfig()
_URL = typer.Option(_DEFAULTS.url, "--url", help="sqlite:///path or redis://host:port/db.")
_NAMESPACE = typer.Option(_DEFAULTS.namespace, "--namespace", help="Key prefix; only it is touched.")


def _with_backend(url: str, namespace: str, action: Callable[[CacheBackend], Awaitable[T]]) -> T:
    async def run() -> T:
        backend = open_backend(url, namespace)
        try:
            return await action(backend)
        finally:
            await backend.aclose()

    return asyncio.run(run())


def register(app: typer.Typer) -> None:
    """Add the ``cache`` sub-command group to ``app``."""
    group = typer.Typer(help="Inspect and maintain the response cache.", no_args_is_help=True)

    @group.command("stats")
    def stats(url: str = _URL, namespace: str = _NAMESPACE) -> None:
        """Entries, bytes and expired entries in the namespace."""
        result = _with_backend(url, namespace, lambda b: b.stats())
        typer.echo(f"backend:   {result.backend}")
        typer.echo(f"location:  {result.location}")
        typer.echo(f"namespace: {namespace}")
        typer.echo(f"entries:   {result.entries}")
        typer.echo(f"bytes:     {result.bytes}")
        typer.echo(f"expired:   {result.expired}")

    @group.command("prune")
    def prune(url: str = _URL, namespace: str = _NAMESPACE) -> None:
        """Delete expired entries (Redis expires entries itself)."""
        removed = _with_backend(url, namespace, lambda b: b.prune())
        typer.echo(f"pruned {removed} expired entries")

    @group.command("clear")
    def clear(
        url: str = _URL,
        namespace: str = _NAMESPACE,
        yes: bool = typer.Option(False, "--yes", help="Do not ask for confirmation."),
    ) -> None:
        """Delete every entry of the namespace (never anything else in the database)."""
        if not yes:
            typer.confirm(f"delete every '{namespace}' cache entry at {redact_url(url)}?", abort=True)
        removed = _with_backend(url, namespace, lambda b: b.clear())
        typer.echo(f"cleared {removed} entries")

    app.add_typer(group, name="cache")
