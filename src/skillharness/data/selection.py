"""Questions of named pools: the questions file and pools.json read together, checked against each other."""

from __future__ import annotations

from collections.abc import Sequence

from skillharness.data.config import DataConfig
from skillharness.data.loader import load_questions
from skillharness.data.pools import FrozenPools, load_pools
from skillharness.data.questions import Question
from skillharness.errors import ConfigError

__all__ = ["load_pool_questions"]


def load_pool_questions(
    data: DataConfig, pools: Sequence[str], *, purpose: str
) -> tuple[dict[str, tuple[Question, ...]], FrozenPools]:
    """The questions of each pool in ``pools`` (in pools.json order) and the frozen pools.

    ``purpose`` names who needs them in the error when the config has no split ("training").
    Raises ConfigError when the split is not configured or names questions the file lacks.
    """
    if data.questions is None or data.pools is None:
        raise ConfigError(
            f"{purpose} needs data.questions and data.pools (a pools.json from `skillharness split`)"
        )
    frozen = load_pools(data.pools, data.pools_sha256)
    by_id = {q.question_id: q for q in load_questions(data.questions, data.benchmark)}
    chosen: dict[str, tuple[Question, ...]] = {}
    for name in pools:
        ids = frozen.questions.get(name, ())
        missing = [qid for qid in ids if qid not in by_id]
        if missing:
            raise ConfigError(f"pools.json names {len(missing)} {name} question(s) not in {data.questions}")
        chosen[name] = tuple(by_id[qid] for qid in ids)
    return chosen, frozen
