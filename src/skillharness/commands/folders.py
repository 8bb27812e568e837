"""One helper the commands share: a folder named by a flag, created, or one clear error."""

from __future__ import annotations

from pathlib import Path

from skillharness.errors import ConfigError

__all__ = ["ensure_folder"]


def ensure_folder(path: Path, flag: str) -> Path:
    """Create ``path`` (and its parents) if needed; ConfigError naming ``flag`` when it cannot be."""
    if path.exists() and not path.is_dir():
        raise ConfigError(f"{flag} {path}: exists and is not a folder")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # a file in the way, no permission, ...
        raise ConfigError(f"{flag} {path}: cannot create the folder ({exc.strerror})") from exc
    return path
