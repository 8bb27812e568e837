"""``skillharness templates check | export | show`` as a user runs them."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from cli_support import command_app
from skillharness.commands import templates as templates_cmd
from skillharness.errors import TemplateError
from skillharness.train.roles.prompt_specs import TEMPLATE_SPECS

APP = command_app(templates_cmd.register)


def test_export_then_check_then_break(tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "prompts"
    exported = runner.invoke(APP, ["templates", "export", "--out", str(out)])
    assert exported.exit_code == 0, exported.output
    assert {f"{name}.md" for name in TEMPLATE_SPECS} | {"_macros.md"} <= {p.name for p in out.iterdir()}

    checked = runner.invoke(APP, ["templates", "check", str(out)])
    assert checked.exit_code == 0, checked.output
    assert all(name in checked.output for name in TEMPLATE_SPECS)

    again = runner.invoke(APP, ["templates", "export", "--out", str(out)])
    assert isinstance(again.exception, TemplateError)
    assert "--force" in str(again.exception)
    assert runner.invoke(APP, ["templates", "export", "--out", str(out), "--force"]).exit_code == 0

    (out / "slow_momentum.md").write_text("")
    broken = runner.invoke(APP, ["templates", "check", str(out)])
    assert isinstance(broken.exception, TemplateError)
    assert "'slow_momentum'" in broken.output
    assert "empty" in broken.output


def test_show_prints_both_parts() -> None:
    shown = CliRunner().invoke(APP, ["templates", "show", "judge"])
    assert shown.exit_code == 0, shown.output
    assert "=== system (judge)" in shown.output
    assert "=== user" in shown.output
    assert "`verdict`" in shown.output
    unknown = CliRunner().invoke(APP, ["templates", "show", "nope"])
    assert isinstance(unknown.exception, TemplateError)
