"""A benchmark result names the code it measured: the commit, and whether the tree held changes.

Checked on a real git repository made in a temporary folder.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from simlab.provenance import code_state

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs the git command")


def _git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    _git(tmp_path, "init", "-q")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "code.py").write_text("x = 1\n")
    (tmp_path / "benchmarks" / "results").mkdir(parents=True)
    (tmp_path / "benchmarks" / "results" / "old.json").write_text("{}\n")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-q", "-m", "first")
    return tmp_path


def test_a_clean_checkout_reads_its_commit(repo: Path) -> None:
    assert code_state(repo) == _git(repo, "rev-parse", "HEAD")


def test_a_changed_source_file_marks_the_commit_modified(repo: Path) -> None:
    (repo / "src" / "code.py").write_text("x = 2\n")
    assert code_state(repo) == _git(repo, "rev-parse", "HEAD") + "+modified"


def test_the_runs_own_results_do_not_mark_it_modified(repo: Path) -> None:
    (repo / "benchmarks" / "results" / "old.json").write_text('{"runs": []}\n')
    (repo / "benchmarks" / "results" / "new.json").write_text("{}\n")
    assert code_state(repo) == _git(repo, "rev-parse", "HEAD")


def test_a_folder_outside_git_says_so(tmp_path: Path) -> None:
    assert code_state(tmp_path) == "unknown (not a git checkout)"
