"""Fixtures for the skills tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from skills_support import SAMPLE

from skillharness.skills import Bundle, SkillDocument


@pytest.fixture
def sample_doc() -> SkillDocument:
    return SkillDocument.parse(SAMPLE, source="sample.md")


@pytest.fixture
def bundle_dir(tmp_path: Path, default_bundle: Bundle) -> Path:
    folder = tmp_path / "bundle"
    default_bundle.save(folder)
    return folder
