"""``commands.folders.output_file``: a refusal suggests --force only to a command that offers it."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillharness.commands.folders import output_file
from skillharness.errors import ConfigError


def _never_ours(path: Path) -> bool:
    return False


@pytest.mark.parametrize("has_force", [False, True])
def test_a_foreign_file_is_refused_and_force_is_suggested_only_when_offered(
    tmp_path: Path, has_force: bool
) -> None:
    theirs = tmp_path / "theirs.json"
    theirs.write_text("[]")
    with pytest.raises(ConfigError, match="exists and is not an earlier output") as caught:
        output_file(theirs, "--export-official", ours=_never_ours, has_force=has_force)
    assert str(caught.value).endswith(
        "choose another path, or pass --force to replace it" if has_force else "choose another path"
    )
    assert ("--force" in str(caught.value)) is has_force
    assert theirs.read_text() == "[]"


def test_force_accepts_a_foreign_file_and_ours_accepts_an_earlier_output(tmp_path: Path) -> None:
    theirs = tmp_path / "theirs.json"
    theirs.write_text("{}")
    assert output_file(theirs, "--out", ours=_never_ours, force=True, has_force=True) == theirs
    assert output_file(theirs, "--out", ours=lambda path: True) == theirs
