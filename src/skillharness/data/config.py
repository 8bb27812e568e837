"""The ``data`` config section: where questions, pools, videos and subtitles live."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, field_validator

from skillharness.data.adapter import load_adapter
from skillharness.errors import DataError
from skillharness.util.model import StrictModel

DEFAULT_BENCHMARK = "videomme"


class DataConfig(StrictModel):
    """Inputs of a run. Relative paths are resolved against the config file's folder."""

    questions: Path | None = Field(None, description="Questions file (parquet, json, jsonl, csv, tsv).")
    pools: Path | None = Field(None, description="Frozen pools.json written by `skillharness split`.")
    pools_sha256: str | None = Field(None, description="Expected sha256 of pools.json; checked at start.")
    videos_dir: Path | None = Field(None, description="Folder of <videoID>.mp4 (or .mkv/.webm) files.")
    subtitles_dir: Path | None = Field(None, description="Folder of <videoID>.srt files (optional).")
    benchmark: str = Field(
        DEFAULT_BENCHMARK,
        description="Layout of the questions: a built-in adapter (videomme, videomme_v2, mvbench, "
        "egoschema, longvideobench, mlvu, nextqa) or an adapter .yaml file (docs/data.md).",
    )

    @field_validator("questions", "pools", "videos_dir", "subtitles_dir", mode="before")
    @classmethod
    def _no_empty_path(cls, value: object) -> object:
        # Path("") is the current folder: an empty setting would silently point at it.
        if isinstance(value, str) and not value.strip():
            raise ValueError("an empty path; leave the key out (or null) for none")
        return value

    @field_validator("benchmark")
    @classmethod
    def _known_benchmark(cls, value: str) -> str:
        # Read now, so a misspelt name or a broken adapter file stops the config, not a run's first load.
        try:
            load_adapter(value)
        except DataError as exc:
            raise ValueError(exc.message) from exc
        return value
