"""Usage errors of every command group: one clear message, exit 2, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_support import run_cli as _cli


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("infer", "--bogus"), "No such option: --bogus"),
        (("infer", "--concurrency", "many"), "Invalid value for '--concurrency'"),
        (("frames",), "Missing argument"),
        (("frames", "show", "v.mp4", "--out", "o", "--count", "-3"), "Invalid value for '--count'"),
        (("frames", "show", "v.mp4", "--out", "o", "--quality", "0"), "--quality"),
        (("runs", "show"), "Missing argument"),
        (("demo", "--videos", "2"), "--videos"),
        (("nosuchcommand",), "No such command"),
        (
            ("compare", "a", "b", "--config", "x.yaml", "--json", "same.out", "--html", "./same.out"),
            "--json and --html name the same file same.out",
        ),
        (("runs",), "Missing command"),
        (("sim", "serve", "--port", "99999999"), "--port"),
        (("split", "--questions", "q.json", "--out", "o", "--temperature", "-1"), "'--temperature'"),
        (("split", "--questions", "q.json", "--out", "o", "--temperature", "nan"), "'--temperature'"),
        (("split", "--questions", "q.json", "--out", "o", "--temperature", "2.5"), "'--temperature'"),
        (("gate", "simulate", "--p-plus", "nan", "--p-minus", "0.1"), "Invalid value for '--p-plus'"),
        (("gate", "plan", "--units", "A=30", "--effects", "nan"), "error: --effects must be finite numbers"),
        (("gate", "plan", "--units", "A=5,A=7"), "error: --units gives class 'A' twice"),
    ],
)
def test_usage_errors_are_one_message_and_exit_2(args: tuple[str, ...], needle: str) -> None:
    result = _cli(*args)
    assert result.returncode == 2, result.stderr
    assert needle in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.slow
def test_no_arguments_shows_help_without_a_traceback() -> None:
    result = _cli()
    assert "Traceback" not in result.stderr
    assert "Usage:" in result.stdout + result.stderr


@pytest.mark.slow
def test_templates_export_into_a_file_is_one_clear_error(tmp_path: Path) -> None:
    taken = tmp_path / "taken"
    taken.write_text("keep me")
    result = _cli("templates", "export", "--out", str(taken))
    assert result.returncode == 2, result.stderr
    assert f"error: --out {taken}: exists and is not a folder" in result.stderr
    assert "Traceback" not in result.stderr
    assert taken.read_text() == "keep me"


@pytest.mark.slow
def test_a_path_the_system_refuses_is_one_message_naming_it_and_exit_1(tmp_path: Path) -> None:
    taken = tmp_path / "keep.txt"
    taken.write_text("keep me")
    result = _cli("data", "synth", "--out", str(taken / "bench"), "--videos", "2")
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith("error: ")
    assert str(taken) in result.stderr  # the path at fault, with the system's reason
    assert taken.read_text() == "keep me"
