"""What ``gate plan`` and ``gate simulate`` read from their flags: the gate's settings (a refusal
named by the flag), the classes' val counts (``--units`` or a split manifest), lists of numbers,
and a simulation's size."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path

from pydantic import ValidationError

from skillharness.commands.flag_errors import flag_problems
from skillharness.errors import ConfigError, SplitError
from skillharness.train import MAX_OBSERVATIONS
from skillharness.train.config import GateConfig

__all__ = ["GATE_FLAGS", "check_size", "floats", "gate_config", "parse_units", "read_manifest_val_counts"]

# The flag that sets each train.gate setting (``gate simulate`` calls n_max --n-max).
GATE_FLAGS = {
    "alpha": "--alpha",
    "alpha_spending": "--alpha-spending",
    "bet_cap": "--bet-cap",
    "n_max": "--budget",
    "bet_strategy": "--strategy",
    "first_stage": "--first-stage",
    "stage_growth": "--growth",
    "mcnemar_alpha": "--mcnemar-alpha",
    "guard_draws": "--guard-draws",
    "guard_harm": "--guard-harm",
    "guard_power": "--guard-power",
    "guard_discordance": "--discordance",
    "guard_max_draws": "--guard-max-draws",
    "guard_clear": "--guard-clear",
}


def gate_config(flags: Mapping[str, str] = GATE_FLAGS, **values: object) -> GateConfig:
    """The gate's settings from the command's flags; a refusal names the flag, not the setting."""
    try:
        return GateConfig(**values)  # type: ignore[arg-type]
    except ValidationError as exc:
        raise ConfigError(f"invalid gate settings: {flag_problems(exc, flags)}", field="gate flags") from exc


def check_size(runs: int, n: int, n_flag: str) -> None:
    """Refuse a simulation too large to finish in a minute or two (its memory is bounded anyway)."""
    if runs * n > MAX_OBSERVATIONS:
        raise ConfigError(
            f"--runs {runs} simulated gates of {n_flag} {n} observations each are {runs * n:,} observations, "
            f"more than the {MAX_OBSERVATIONS:,} one simulation draws; lower --runs or {n_flag}",
            field=f"--runs/{n_flag}",
        )


def parse_units(text: str, per_unit: int) -> dict[str, int]:
    """``"Object Reasoning=30,OCR Problems=6"`` -> drawable observations per class."""
    counts: dict[str, int] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, sep, value = part.rpartition("=")
        if not sep or not name.strip() or not value.strip().isdigit():
            raise ConfigError(f"--units entries look like 'Class Name=30', got {part!r}", field="--units")
        if name.strip() in counts:
            raise ConfigError(f"--units gives class {name.strip()!r} twice", field="--units")
        counts[name.strip()] = int(value) * per_unit
    if not counts:
        raise ConfigError("--units is empty", field="--units")
    return counts


def read_manifest_val_counts(path: Path) -> dict[str, int]:
    """Val questions per task type from a ``split_manifest.json`` (``counts.val.<type>.<duration>``).

    A task type present in any pool but absent from val is listed with 0: it is the class whose
    gate can never accept, so the plan must show it rather than drop it.
    """
    try:
        doc = json.loads(path.read_text())
        counts = doc["counts"]
        val = counts["val"]
        tasks = sorted({task for pool in counts.values() for task in pool})
        return {task: sum(int(n) for n in val.get(task, {}).values()) for task in tasks}
    except FileNotFoundError as exc:
        raise ConfigError(f"{path}: manifest not found", file=str(path)) from exc
    except (json.JSONDecodeError, KeyError, TypeError, AttributeError, ValueError) as exc:
        raise SplitError(
            f"{path}: not a split manifest with counts.val.<task type>.<duration> ({exc})", file=str(path)
        ) from exc


def floats(text: str, flag: str) -> tuple[float, ...]:
    try:
        values = tuple(float(x) for x in text.split(",") if x.strip())
    except ValueError as exc:
        raise ConfigError(f"{flag} must be comma-separated numbers, got {text!r}", field=flag) from exc
    if not all(math.isfinite(x) for x in values):  # float() reads 'nan' and 'inf'
        raise ConfigError(f"{flag} must be finite numbers, got {text!r}", field=flag)
    return values


# ``gate plan``'s own options; the shared ones above keep plan and simulate in step.
