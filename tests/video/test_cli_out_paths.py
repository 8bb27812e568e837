"""`frames --out` and `data synth --out` naming a file: one clear message, exit 2, no traceback."""

from __future__ import annotations

from pathlib import Path

from cli_support import run_cli as _cli


def test_frames_out_naming_a_file_is_one_clear_error(tmp_path: Path, gop_video: Path) -> None:
    (tmp_path / "taken").write_text("a file")
    result = _cli("frames", str(gop_video), "--count", "1", "--out", "taken/x", "--no-cache", cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert "error: --out taken/x: cannot create the folder" in result.stderr
    assert "Traceback" not in result.stderr


def test_synth_out_naming_a_file_is_one_clear_error(tmp_path: Path) -> None:
    (tmp_path / "taken").write_text("keep me")
    result = _cli("data", "synth", "--out", "taken", "--videos", "1", cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert "taken exists and is not a folder" in result.stderr
    assert "Traceback" not in result.stderr
    assert (tmp_path / "taken").read_text() == "keep me"
