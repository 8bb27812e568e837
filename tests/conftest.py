"""Root fixtures shared by every test folder."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from services_support import new_database, pg_server_urls, start_redis

REPO = Path(__file__).resolve().parents[1]
# The real Video-MME questions live outside the repository (in the workspace's shared folder);
# a user's fresh clone will not have them, so the tests that need them skip and say why.
VIDEOMME_QUESTIONS = Path(
    os.environ.get(
        "SKILLHARNESS_VIDEOMME_QUESTIONS", REPO.parent / "shared/data/videomme/videomme_questions.json"
    )
)


@pytest.fixture(scope="session")
def videomme_questions_path() -> Path:
    if not VIDEOMME_QUESTIONS.is_file():
        pytest.skip(
            f"real Video-MME questions not found at {VIDEOMME_QUESTIONS} "
            "(set SKILLHARNESS_VIDEOMME_QUESTIONS to the official annotations to run these tests)"
        )
    return VIDEOMME_QUESTIONS


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test sees a developer's own SKILLHARNESS_* settings."""
    for name in list(os.environ):
        if name.startswith("SKILLHARNESS_") and name != "SKILLHARNESS_VIDEOMME_QUESTIONS":
            monkeypatch.delenv(name)


@pytest.fixture(scope="session")
def pg_server() -> Iterator[str]:
    """A throwaway PostgreSQL cluster on a free port (skips when not installed); its admin URL."""
    yield from pg_server_urls()


@pytest.fixture
def pg_url(pg_server: str) -> str:
    """A fresh, empty database on the test server."""
    return new_database(pg_server)


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    """The session's redis-server URL (skips when redis-server is not installed)."""
    proc, url = start_redis()
    yield url
    proc.terminate()
    proc.wait(timeout=10)
