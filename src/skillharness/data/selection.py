"""Questions of named pools: the questions file and pools.json read together, checked against each other.

This is the one join of the two files: ``infer``, preflight, training and the holdout all select a
pool's questions here, so a pool names its questions in pools.json order everywhere.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from skillharness.data.adapter import load_adapter
from skillharness.data.config import DEFAULT_BENCHMARK, DataConfig
from skillharness.data.convert import load_benchmark
from skillharness.data.pools import FrozenPools, load_pools
from skillharness.data.questions import Question
from skillharness.data.split import Pool
from skillharness.errors import ConfigError

__all__ = ["load_pool_questions", "read_questions", "select_pool"]

_LISTED = 5  # question ids an error names before it only counts


def read_questions(path: Path | str, benchmark: str | Path = DEFAULT_BENCHMARK) -> tuple[Question, ...]:
    """Every question of ``path`` (a file, or a folder for per-task layouts), read through the
    adapter ``benchmark`` names (a built-in name or an adapter .yaml file).

    The one reader of a configured questions source: the split, ``infer``, preflight, training and
    the holdout all see the same questions for one ``data.benchmark``.
    """
    return load_benchmark(path, load_adapter(benchmark)).questions


def select_pool(
    by_id: Mapping[str, Question], frozen: FrozenPools, pool: Pool, source: Path | str
) -> tuple[Question, ...]:
    """The questions of ``pool``, in pools.json order, from ``by_id`` (read from ``source``).

    Raises ConfigError naming the missing ids when pools.json lists a question ``source`` lacks:
    the split was made from another questions file.
    """
    ids = frozen.questions.get(pool, ())
    missing = [qid for qid in ids if qid not in by_id]
    if missing:
        shown = ", ".join(missing[:_LISTED]) + (" ..." if len(missing) > _LISTED else "")
        raise ConfigError(
            f"pools.json names {len(missing)} {pool} question(s) not in {source}: {shown}",
            pool=str(pool),
            file=str(source),
        )
    return tuple(by_id[qid] for qid in ids)


def load_pool_questions(
    data: DataConfig, pools: Sequence[Pool], *, purpose: str
) -> tuple[dict[Pool, tuple[Question, ...]], FrozenPools]:
    """The questions of each pool in ``pools`` (in pools.json order) and the frozen pools.

    ``purpose`` names who needs them in the error when the config has no split ("training").
    Raises ConfigError when the split is not configured or names questions the file lacks.
    """
    if data.questions is None:
        raise ConfigError(f"{purpose} needs data.questions: name the questions file", key="data.questions")
    if data.pools is None:
        raise ConfigError(
            f"{purpose} needs data.pools (a pools.json from `skillharness split`)", key="data.pools"
        )
    frozen = load_pools(data.pools, data.pools_sha256)
    by_id = {q.question_id: q for q in read_questions(data.questions, data.benchmark)}
    return {Pool(name): select_pool(by_id, frozen, Pool(name), data.questions) for name in pools}, frozen
