"""The fixtures shared by every test folder, each defined here once with one scope.

Folder conftests hold only fixtures of their own folder. A folder that needs another variant of a
shared fixture gets a variant named here (``holdout_bench``, ``shared_sim``) or, for a simulator,
marks its tests with ``@pytest.mark.sim_world(...)`` (see ``sim``); never a redefinition under the
same name. The README's "Tests and benchmarks" section lists them.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import ExitStack
from pathlib import Path

import pytest

from bench_support import Bench, StartSim, make_bench
from llama_support import LlamaServer, running_llama_server
from services_support import new_database, pg_server_urls, start_redis
from skillharness.data.questions import Question
from skillharness.data.synth import ensure_synthetic_benchmark
from skillharness.sim import SimConfig, SimServer
from skillharness.skills import Bundle, initial_bundle

REPO = Path(__file__).resolve().parents[1]
# The real Video-MME questions live outside the repository (in the workspace's shared folder);
# a user's fresh clone will not have them, so the tests that need them skip and say why.
VIDEOMME_QUESTIONS = Path(
    os.environ.get(
        "SKILLHARNESS_VIDEOMME_QUESTIONS", REPO.parent / "shared/data/videomme/videomme_questions.json"
    )
)


# The simulated world of ``sim`` and the shared simulators: seed 3, no latency, no faults.
DEFAULT_WORLD = SimConfig(seed=3)


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


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    """A SQLite store file of this test alone (not created yet)."""
    return f"sqlite:///{tmp_path / 'runs.sqlite'}"


@pytest.fixture(scope="module")
def llama() -> Iterator[LlamaServer]:
    """A real llama.cpp server with the small model, one per module (skips when not built)."""
    yield from running_llama_server()


@pytest.fixture(scope="session")
def default_bundle() -> Bundle:
    """The initial bundle (frozen, so shared by the session)."""
    return initial_bundle()


# --- Synthetic benchmarks -------------------------------------------------------------------
# Session scope: generating one takes seconds. Every test treats them as read-only; a test that
# changes a file copies the folder into its own tmp_path first.


@pytest.fixture(scope="session")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Bench:
    """The default benchmark: seed 3, 12 videos of 3 questions, split 4/4/4 videos."""
    return make_bench(tmp_path_factory.mktemp("bench"))


@pytest.fixture(scope="session")
def holdout_bench(tmp_path_factory: pytest.TempPathFactory) -> Bench:
    """24 videos of 3 questions: 12 train, 12 val and a 48-question test pool."""
    return make_bench(tmp_path_factory.mktemp("holdout-bench"), videos=24, sizes=(4, 4, 16))


@pytest.fixture(scope="session")
def validate_bench(tmp_path_factory: pytest.TempPathFactory) -> Bench:
    """90 val questions over 12 classes (8-11 in the common ones, 2-4 in the micro ones)."""
    return make_bench(tmp_path_factory.mktemp("validate-bench"), videos=36, sizes=(4, 30, 2))


@pytest.fixture(scope="session")
def train_bench(tmp_path_factory: pytest.TempPathFactory) -> Bench:
    """Large enough for a few training steps per epoch: seed 5, 30 videos, split 12/12/6."""
    return make_bench(tmp_path_factory.mktemp("train-bench"), seed=5, videos=30, sizes=(12, 12, 6))


@pytest.fixture(scope="session")
def synth_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The raw default synthetic benchmark folder (36 videos x 3 questions), not split."""
    return ensure_synthetic_benchmark(tmp_path_factory.mktemp("synth-cache"))


# --- Simulators on loopback -----------------------------------------------------------------

SimQuestions = Sequence[Question] | Path | None


@pytest.fixture
def sim_factory() -> Iterator[StartSim]:
    """Start simulators in this test (function scope); each one stops when the test ends."""
    with ExitStack() as stack:

        def start(
            config: SimConfig, questions: SimQuestions = None, benchmark: str = "videomme"
        ) -> SimServer:
            # A path is read through the adapter ``benchmark`` names, as `sim serve --benchmark` does.
            return stack.enter_context(SimServer(config, questions=questions, benchmark=benchmark))

        yield start


@pytest.fixture
def sim(request: pytest.FixtureRequest, sim_factory: StartSim) -> SimServer:
    """A fresh simulator for this test alone (function scope: a test may inject faults, read stats).

    Its world is ``DEFAULT_WORLD`` over ``bench``'s questions, unless the test or its module is marked
    ``@pytest.mark.sim_world(config, questions=...)``: ``questions`` names a fixture (a ``Bench``
    or a question list), or is a question list or ``None`` itself.
    """
    marker = request.node.get_closest_marker("sim_world")
    config, questions = _marked_world(*marker.args, **marker.kwargs) if marker else (DEFAULT_WORLD, "bench")
    if isinstance(questions, str):
        questions = request.getfixturevalue(questions)
    if isinstance(questions, Bench):
        questions = questions.questions
    return sim_factory(config, questions)


@pytest.fixture(scope="session")
def shared_sim(bench: Bench) -> Iterator[SimServer]:
    """``DEFAULT_WORLD`` over ``bench``, shared by the session: for tests that only ask it questions
    (no faults, no stats, no reset)."""
    with SimServer(DEFAULT_WORLD, questions=bench.questions) as server:
        yield server


@pytest.fixture(scope="session")
def holdout_sim(holdout_bench: Bench) -> Iterator[SimServer]:
    """``DEFAULT_WORLD`` over ``holdout_bench``, shared by the session like ``shared_sim``."""
    with SimServer(DEFAULT_WORLD, questions=holdout_bench.questions) as server:
        yield server


def _marked_world(config: SimConfig, questions: str | SimQuestions = "bench") -> tuple[SimConfig, object]:
    """The arguments of a ``sim_world`` marker, with their defaults."""
    return config, questions
