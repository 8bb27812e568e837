"""What ``experiment init`` writes into an experiment folder, and whether it is already there.

The folder holds ``experiment.yaml`` and everything it names that init creates: ``split/``
(the frozen pools), ``bundle/`` (the initial bundle), and, once preflight or a run opened them,
``runs.sqlite`` and ``cache.sqlite``. Every path in the YAML is relative to it, so the folder
can move as a whole (the inputs outside it are reached by relative paths too).

Each artifact is compared with what these arguments would write before anything is written:
*new* (absent), *same* (identical: a second run with the same arguments writes nothing) or
*differs*, which only ``--force`` replaces.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from skillharness.config_doc import commented_yaml
from skillharness.data import (
    DEFAULT_BENCHMARK,
    POOLS_FILE,
    builtin_adapters,
    existing_artifacts,
    verify_split,
)
from skillharness.errors import SkillharnessError
from skillharness.eval import EvalConfig
from skillharness.llm.config import CacheConfig
from skillharness.skills import Bundle
from skillharness.train.config import TrainConfig
from skillharness.util.atomic import sha256_file

__all__ = [
    "BUNDLE_DIR",
    "EXPERIMENT_FILE",
    "SPLIT_DIR",
    "Experiment",
    "State",
    "bundle_state",
    "experiment_yaml",
    "split_state",
    "yaml_state",
]

EXPERIMENT_FILE = "experiment.yaml"
SPLIT_DIR = "split"
BUNDLE_DIR = "bundle"
_STORE = "sqlite:///runs.sqlite"
_CACHE = "sqlite:///cache.sqlite"
# The evolve role samples so that its candidates differ (at temperature 0 one is asked, and
# preflight warns); 0.7 is the training example's choice.
_EVOLVE_TEMPERATURE = 0.7


class State(StrEnum):
    NEW = "new"
    SAME = "same"
    DIFFERS = "differs"


@dataclass(frozen=True)
class Experiment:
    """The arguments of ``experiment init`` that end up in ``experiment.yaml``."""

    folder: Path  # absolute
    questions: Path
    videos: Path
    subtitles: Path | None
    endpoint: str
    model: str
    api_key_env: str | None
    holdout: bool
    temperature: float
    benchmark: str = DEFAULT_BENCHMARK  # a built-in adapter's name, or an adapter file (absolute)
    # train.gate.min_distinct when init lowered it for a small data set (None: the default stands),
    # and why: the file says so beside the value.
    min_distinct: int | None = None
    min_distinct_note: str = ""

    @property
    def yaml_path(self) -> Path:
        return self.folder / EXPERIMENT_FILE

    def rel(self, path: Path) -> str:
        """``path`` relative to the experiment folder (``..`` for inputs outside it)."""
        return os.path.relpath(path.resolve(), self.folder)


def _train_values(train: TrainConfig, exp: Experiment) -> dict[str, Any]:
    """The train keys init writes: the design a run trains with, written out so the file shows it."""
    gate = {"alpha": train.gate.alpha, "n_max": train.gate.n_max, "merge_credit": train.gate.merge_credit}
    return {
        "epochs": train.epochs,
        "batch_size": train.batch_size,
        "early_stop_patience": train.early_stop_patience,
        "task_types": None,
        "gate": gate | ({} if exp.min_distinct is None else {"min_distinct": exp.min_distinct}),
        "evolve": {"candidates": train.evolve.candidates, "rank": train.evolve.rank},
        "momentum": {"enabled": train.momentum.enabled},
        "budget": {"max_calls": None, "max_wall_s": None},
        "roles": {"evolve": {"temperature": _EVOLVE_TEMPERATURE}},
    }


def experiment_yaml(exp: Experiment, pools_sha256: str) -> str:
    """The complete experiment.yaml: the keys a run over this split needs, each commented."""
    train, evals = TrainConfig(), EvalConfig()
    endpoint: dict[str, Any] = {"base_url": exp.endpoint}
    if exp.api_key_env:
        endpoint["api_key_env"] = exp.api_key_env
    data: dict[str, Any] = {
        "questions": exp.rel(exp.questions),
        # A built-in name as given; a user's adapter file relative to this file, like every path.
        "benchmark": exp.benchmark if exp.benchmark in builtin_adapters() else exp.rel(Path(exp.benchmark)),
        "pools": f"{SPLIT_DIR}/{POOLS_FILE}",
        "pools_sha256": pools_sha256,
        "videos_dir": exp.rel(exp.videos),
    }
    if exp.subtitles is not None:
        data["subtitles_dir"] = exp.rel(exp.subtitles)
    values: dict[str, Any] = {
        "data": data,
        "llm": {"model": exp.model, "endpoints": [endpoint]},
        "cache": {"url": _CACHE, "ttl": CacheConfig().ttl},
        "store": {"url": _STORE},
        "agent": {
            "bundle": BUNDLE_DIR,
            # Written out, so the file shows how paired draws are taken (null: independent arms).
            "sampling": {"temperature": exp.temperature, "seed": "per_draw" if exp.temperature > 0 else None},
        },
        "train": _train_values(train, exp),
        "eval": {"run_holdout_eval": exp.holdout, "samples": evals.samples},
    }
    notes = {
        "data.pools_sha256": "Written by `experiment init`: a changed pools.json stops every run.",
        "agent.sampling.temperature": "Set by --temperature. Above 0 each gate draws fresh samples "
        "with replacement (docs/gate.md).",
        "agent.sampling.seed": "per_draw: both arms of a paired draw share one seed (fewer draws per "
        "decision; the run's id salts it); null: independent arms (docs/agent.md).",
        "cache.url": "Relative to this file's folder, like every path here.",
        "train.gate.n_max": "`skillharness gate plan` shows the power this budget gives each class.",
        "train.task_types": "null: every class that is not micro (the split's report names them).",
        "train.budget": "null: no limit. A limit stops the run cleanly; raise it and --resume.",
        "eval.run_holdout_eval": "Set by --holdout / --no-holdout.",
    }
    if exp.min_distinct_note:
        notes["train.gate.min_distinct"] = exp.min_distinct_note
    header = (
        "Written by `skillharness experiment init`. Every path is relative to this file's folder.",
        "Each comment is the setting's description; every key (and the ones not listed here): "
        "docs/config.md.",
        "Environment variables override any key: SKILLHARNESS_TRAIN__EPOCHS=1 sets train.epochs.",
    )
    return commented_yaml(values, notes=notes, header=header)


def yaml_state(exp: Experiment, text: str) -> State:
    if not exp.yaml_path.exists():
        return State.NEW
    try:
        return State.SAME if exp.yaml_path.read_text(encoding="utf-8") == text else State.DIFFERS
    except (OSError, UnicodeDecodeError):
        return State.DIFFERS


def split_state(folder: Path, pools_sha256: str, questions: Path) -> State:
    """Same when the frozen split is the one whose pools.json hashes to ``pools_sha256`` and it
    verifies against ``questions`` (hashes and counts as its manifest says)."""
    if not existing_artifacts(folder):
        return State.NEW
    try:
        same = sha256_file(folder / POOLS_FILE) == pools_sha256
    except OSError:
        return State.DIFFERS
    return State.SAME if same and not verify_split(folder, questions) else State.DIFFERS


def bundle_state(folder: Path, initial: Bundle) -> State:
    """Same when ``folder`` holds exactly the files of ``initial`` (the data's initial bundle)."""
    if not folder.exists() or (folder.is_dir() and not any(folder.iterdir())):
        return State.NEW
    try:
        return State.SAME if Bundle.load(folder).files() == initial.files() else State.DIFFERS
    except SkillharnessError:
        return State.DIFFERS
