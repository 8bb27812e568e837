"""Helpers the commands share: a folder or an output file named by a flag, made ready, or one clear
error naming the flag, before any work is done."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Collection
from pathlib import Path

from skillharness.errors import ConfigError

__all__ = ["ensure_folder", "json_with_keys", "output_file", "text_with_marker"]


def ensure_folder(path: Path, flag: str) -> Path:
    """Create ``path`` (and its parents) if needed; ConfigError naming ``flag`` when it cannot be."""
    if path.exists() and not path.is_dir():
        raise ConfigError(f"{flag} {path}: exists and is not a folder")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # a file in the way, no permission, ...
        raise ConfigError(f"{flag} {path}: cannot create the folder ({exc.strerror})") from exc
    return path


def output_file(
    path: Path, flag: str, *, ours: Callable[[Path], bool], force: bool = False, has_force: bool = False
) -> Path:
    """``path``, checked free to write: a writable folder to make it in, and no file there but one
    ``ours`` recognises as an earlier output of the same command (``force``: any file).
    ``has_force``: the command offers ``--force``, so the refusal may suggest it.

    A command that rewrites its own page on every run must never replace what it did not write:
    a split's pools, a config or a run store named by mistake would be lost."""
    if path.is_dir():
        raise ConfigError(f"{flag} {path}: is a folder; name a file")
    if path.exists() and not force and not ours(path):
        remedy = "choose another path, or pass --force to replace it" if has_force else "choose another path"
        raise ConfigError(f"{flag} {path}: exists and is not an earlier output of this command; {remedy}")
    # Nothing is created yet (the command may still refuse its input): the nearest folder that
    # exists must be one, and writable, so the writer can make the rest.
    existing = next(p for p in (path.parent, *path.parent.parents) if p.exists())
    if not existing.is_dir():
        raise ConfigError(f"{flag} {path}: {existing} is a file, not a folder")
    if not os.access(existing, os.W_OK):
        raise ConfigError(f"{flag} {path}: cannot write in {existing} (permission denied)")
    return path


def text_with_marker(marker: str) -> Callable[[Path], bool]:
    """A test for ``output_file``: the file's first 4 KiB hold ``marker``."""

    def test(path: Path) -> bool:
        try:
            with path.open("rb") as handle:
                return marker.encode() in handle.read(4096)
        except OSError:
            return False

    return test


def json_with_keys(keys: Collection[str]) -> Callable[[Path], bool]:
    """A test for ``output_file``: the file is a JSON object holding every one of ``keys``."""

    def test(path: Path) -> bool:
        try:
            data = json.loads(path.read_bytes())
        except (OSError, ValueError):
            return False
        return isinstance(data, dict) and all(k in data for k in keys)

    return test
