"""The flag checks ``experiment init`` makes before it writes anything.

A wrong flag found after the split and experiment.yaml are written leaves an experiment that
differs from the fixed command's, so the fix would need ``--force``; found first, it writes
nothing and the corrected command simply runs. Each error names its flag.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

from skillharness.config import load_config
from skillharness.data import Question
from skillharness.errors import ConfigError, DataError, SkillharnessError
from skillharness.infer import probe_endpoints
from skillharness.llm.config import LLMConfig
from skillharness.video.locate import locate_video

__all__ = ["check_endpoint", "check_videos"]

_SHOWN = 5  # missing videos named in the error; the count says how many more


def check_videos(rows: Sequence[Question], videos: Path) -> None:
    """Every video the questions name is in ``videos``; ConfigError naming --videos and a few missing."""
    tasks = {q.videoID: q.task_type for q in rows}  # a video's task names a frame folder's error
    missing = []
    for key in sorted(tasks):
        try:
            locate_video(videos, key, task=tasks[key])
        except DataError as exc:
            if "folder of frame images" in str(exc):
                raise ConfigError(f"--videos: {exc}", field="--videos") from exc
            missing.append(key)
    if not missing:
        return
    shown = ", ".join(missing[:_SHOWN]) + (
        f" and {len(missing) - _SHOWN} more" if len(missing) > _SHOWN else ""
    )
    raise ConfigError(
        f"--videos {videos}: {len(missing)} of the {len(tasks)} videos the questions name are not "
        f"there (looked for <videoID>.mp4/.mkv/.webm/.mov/.avi): {shown}",
        field="--videos",
        missing=missing[:_SHOWN],
    )


def check_endpoint(endpoint: str, model: str, api_key_env: str | None) -> LLMConfig:
    """The endpoint answers ``GET /models`` (under ``llm.retry``) and lists ``model`` among them.

    A server whose listing cannot be read (no ``/models``, not OpenAI's format) is not refused:
    the run's first call will say whether it serves the model.
    """
    settings = _settings(endpoint, model, api_key_env)
    try:
        (listing,) = asyncio.run(probe_endpoints(settings))
    except SkillharnessError as exc:
        raise ConfigError(f"--endpoint {endpoint} does not answer: {exc}", field="--endpoint") from exc
    if listing.known and listing.ids and model not in listing.ids:
        raise ConfigError(
            f"--model {model!r}: the endpoint {endpoint} does not serve it; "
            f"it serves: {', '.join(listing.ids)}",
            field="--model",
            served=list(listing.ids),
        )
    return settings


def _settings(endpoint: str, model: str, api_key_env: str | None) -> LLMConfig:
    entry = {"base_url": endpoint, "api_key_env": api_key_env}
    try:
        return load_config(None, {"llm.model": model, "llm.endpoints": [entry]}).llm
    except ConfigError as exc:
        raise ConfigError(f"--endpoint / --model: {exc}", field="--endpoint") from exc
