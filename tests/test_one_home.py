"""Shared concepts live in one place (issue: training groundwork, item 6), checked on the source.

Each check reads ``src/`` and fails when a second home appears: correctness decided outside the
agent, a pool named by a bare string where ``Pool`` exists.
"""

from __future__ import annotations

import ast
from pathlib import Path

from skillharness.agent.records import Prediction, PredictionStatus
from skillharness.eval.tables import Tally

SRC = Path(__file__).resolve().parents[1] / "src" / "skillharness"
_POOL_STRINGS = {"train", "val", "test"}

# The agent decides correctness when it answers. The reference protocols re-parse the raw reply
# with another parser, which is their whole point, and the simulator predicts what each of those
# parsers will score (its oracle's truth), so these two compare letters themselves. The oracle's
# world also asks whether the question its roles take a prompt for has the same right letter.
_DECIDES_CORRECTNESS = {"agent/episode.py", "infer/scoring.py", "sim/plain.py", "sim/world.py"}


def _modules() -> list[tuple[str, ast.AST]]:
    paths = sorted(SRC.rglob("*.py"))
    return [(str(p.relative_to(SRC)), ast.parse(p.read_text(encoding="utf-8"))) for p in paths]


def _compares_an_answer(node: ast.AST) -> bool:
    if not isinstance(node, ast.Compare) or not any(isinstance(op, ast.Eq) for op in node.ops):
        return False
    return any(isinstance(s, ast.Attribute) and s.attr == "answer" for s in [node.left, *node.comparators])


def _is_pool_string(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value in _POOL_STRINGS


def _names_a_pool_by_string(node: ast.AST) -> bool:
    if isinstance(node, ast.keyword) and node.arg == "pool" and isinstance(node.value, ast.Constant):
        return node.value.value in _POOL_STRINGS
    if isinstance(node, ast.Dict):
        pairs = zip(node.keys, node.values, strict=True)
        return any(
            isinstance(k, ast.Constant)
            and k.value == "pool"
            and isinstance(v, ast.Constant)
            and v.value in _POOL_STRINGS
            for k, v in pairs
        )
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        return node.slice.value in _POOL_STRINGS and "pool" in ast.unparse(node.value).lower()
    return False


def test_correctness_is_decided_once_by_the_agent() -> None:
    offenders = [
        f"{name}:{node.lineno}: {ast.unparse(node)}"
        for name, tree in _modules()
        if name not in _DECIDES_CORRECTNESS
        for node in ast.walk(tree)
        if _compares_an_answer(node)
    ]
    assert offenders == []


def test_a_tally_counts_what_the_prediction_says() -> None:
    right = Prediction(run_id="r", question_id="q", answer="B", correct=True, status=PredictionStatus.OK)
    wrong = right.model_copy(update={"correct": False})
    unparsed = right.model_copy(
        update={"answer": None, "correct": False, "status": PredictionStatus.PARSE_ERROR}
    )
    lost = right.model_copy(update={"answer": None, "correct": None, "status": PredictionStatus.INFRA_ERROR})
    tally = Tally().add(right).add(wrong).add(unparsed).add(lost)
    assert (tally.answered, tally.correct, tally.parse_errors, tally.infra_errors) == (3, 1, 1, 1)


def test_pools_are_named_by_the_enum() -> None:
    offenders = [
        f"{name}: {ast.unparse(node)}"
        for name, tree in _modules()
        for node in ast.walk(tree)
        if _names_a_pool_by_string(node)
    ]
    assert offenders == []
