"""``skillharness cache stats|prune|clear``: look after the response cache.

The cache is the one of ``--url``/``--namespace`` when given, else the ``cache`` section of the
config (``--config`` YAML, then ``SKILLHARNESS_CACHE__*`` environment variables, then defaults).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

import typer

from skillharness.llm.cache.backend import CacheBackend, redact_url
from skillharness.llm.cache.opener import open_backend

__all__ = ["register"]

T = TypeVar("T")

_CONFIG = typer.Option(None, "--config", help="Experiment YAML whose 'cache' section names the cache.")
_URL = typer.Option(None, "--url", help="sqlite:///path or redis://host:port/db (overrides the config).")
_NAMESPACE = typer.Option(None, "--namespace", help="Key prefix; only it is touched (overrides the config).")


def _target(config: Path | None, url: str | None, namespace: str | None) -> tuple[str, str]:
    from skillharness.config import load_config

    section = load_config(config).cache
    return url or section.url, namespace or section.namespace


def _missing_sqlite(url: str) -> bool:
    return url.startswith("sqlite:///") and not Path(url.removeprefix("sqlite:///")).exists()


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
    def stats(
        config: Path | None = _CONFIG, url: str | None = _URL, namespace: str | None = _NAMESPACE
    ) -> None:
        """Entries, bytes and expired entries in the namespace."""
        url, namespace = _target(config, url, namespace)
        if _missing_sqlite(url):
            typer.echo(f"no cache file at {url.removeprefix('sqlite:///')}")
            return
        result = _with_backend(url, namespace, lambda b: b.stats())
        typer.echo(f"backend:   {result.backend}")
        typer.echo(f"location:  {result.location}")
        typer.echo(f"namespace: {namespace}")
        typer.echo(f"entries:   {result.entries}")
        typer.echo(f"bytes:     {result.bytes}")
        typer.echo(f"expired:   {result.expired}")

    @group.command("prune")
    def prune(
        config: Path | None = _CONFIG, url: str | None = _URL, namespace: str | None = _NAMESPACE
    ) -> None:
        """Delete expired entries (Redis expires entries itself)."""
        url, namespace = _target(config, url, namespace)
        removed = 0 if _missing_sqlite(url) else _with_backend(url, namespace, lambda b: b.prune())
        typer.echo(f"pruned {removed} expired entries")

    @group.command("clear")
    def clear(
        config: Path | None = _CONFIG,
        url: str | None = _URL,
        namespace: str | None = _NAMESPACE,
        yes: bool = typer.Option(False, "--yes", help="Do not ask for confirmation."),
    ) -> None:
        """Delete every entry of the namespace (never anything else in the database)."""
        url, namespace = _target(config, url, namespace)
        if _missing_sqlite(url):
            typer.echo("cleared 0 entries")
            return
        if not yes:
            typer.confirm(f"delete every '{namespace}' cache entry at {redact_url(url)}?", abort=True)
        removed = _with_backend(url, namespace, lambda b: b.clear())
        typer.echo(f"cleared {removed} entries")

    app.add_typer(group, name="cache")
