"""``skillharness templates check | export | show`` as a user runs them."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from skillharness.commands import templates as templates_cmd
from skillharness.errors import TemplateError
from skillharness.train.prompt_specs import TEMPLATE_SPECS


@pytest.fixture
def app() -> typer.Typer:
    root = typer.Typer()

    @root.callback()
    def _root() -> None:
        """Test root."""

    templates_cmd.register(root)
    return root


def test_export_then_check_then_break(app: typer.Typer, tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "prompts"
    exported = runner.invoke(app, ["templates", "export", "--out", str(out)])
    assert exported.exit_code == 0, exported.output
    assert {f"{name}.md" for name in TEMPLATE_SPECS} | {"_macros.md"} <= {p.name for p in out.iterdir()}

    checked = runner.invoke(app, ["templates", "check", str(out)])
    assert checked.exit_code == 0, checked.output
    assert all(name in checked.output for name in TEMPLATE_SPECS)

    again = runner.invoke(app, ["templates", "export", "--out", str(out)])
    assert isinstance(again.exception, TemplateError)
    assert "--force" in str(again.exception)
    assert runner.invoke(app, ["templates", "export", "--out", str(out), "--force"]).exit_code == 0

    (out / "slow_momentum.md").write_text("")
    broken = runner.invoke(app, ["templates", "check", str(out)])
    assert isinstance(broken.exception, TemplateError)
    assert "'slow_momentum'" in broken.output
    assert "empty" in broken.output


def test_show_prints_both_parts(app: typer.Typer) -> None:
    shown = CliRunner().invoke(app, ["templates", "show", "judge"])
    assert shown.exit_code == 0, shown.output
    assert "=== system (judge)" in shown.output
    assert "=== user" in shown.output
    assert "`verdict`" in shown.output
    unknown = CliRunner().invoke(app, ["templates", "show", "nope"])
    assert isinstance(unknown.exception, TemplateError)
