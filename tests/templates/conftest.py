"""Fixtures for the prompt-template tests: the packaged templates, and a writable copy of them."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillharness.train.roles.templates import PromptTemplates, load_templates, packaged_prompts


@pytest.fixture
def prompt_copy(tmp_path: Path) -> Path:
    """A copy of the packaged prompts a test may break (delete, empty, rewrite a file)."""
    folder = tmp_path / "prompts"
    folder.mkdir()
    for entry in packaged_prompts().iterdir():
        if entry.name.endswith(".md"):
            (folder / entry.name).write_bytes(entry.read_bytes())
    return folder


@pytest.fixture(scope="module")
def templates() -> PromptTemplates:
    """The packaged templates, loaded once per module."""
    return load_templates()
