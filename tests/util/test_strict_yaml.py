"""The one YAML reader of every file a user writes: duplicate keys refused, YAML 1.2 booleans."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from skillharness.config import load_config
from skillharness.util.strict_yaml import safe_load


def test_only_true_and_false_are_booleans_so_a_column_named_off_stays_a_name() -> None:
    """YAML 1.1 (PyYAML's) reads off/no/on/yes as booleans: a subtitle offset column named ``off``
    or a missing-option marker ``no`` would arrive as False."""
    loaded = safe_load("offset: off\nmissing: [no, n/a]\nanswer: yes\nflag: true\nother: FALSE\n")
    assert loaded == {
        "offset": "off", "missing": ["no", "n/a"], "answer": "yes", "flag": True, "other": False
    }  # fmt: skip
    assert yaml.safe_load("x: off") == {"x": False}, "PyYAML's own loader is left as it is"


def test_a_boolean_setting_written_yes_or_off_still_means_true_or_false(tmp_path: Path) -> None:
    path = tmp_path / "experiment.yaml"
    path.write_text("agent:\n  subtitles: off\neval:\n  run_holdout_eval: yes\n")
    config = load_config(path)
    assert config.agent.subtitles is False
    assert config.eval.run_holdout_eval is True


def test_a_key_given_twice_is_refused_naming_both_lines() -> None:
    with pytest.raises(yaml.YAMLError, match=r"found the key 'a' twice \(first on line 1\)"):
        safe_load("a: 1\nb: 2\na: 3\n")
