"""Finding a question's video and subtitle files from the folders the data config names."""

from __future__ import annotations

from pathlib import Path

from skillharness.errors import DataError

__all__ = ["VIDEO_EXTENSIONS", "locate_subtitles", "locate_video"]

VIDEO_EXTENSIONS = (".mp4", ".mkv", ".webm", ".mov", ".avi")
_SUBTITLE_EXTENSIONS = (".srt", ".vtt", ".ass", ".ssa")


def locate_video(videos_dir: Path | str, video_key: str) -> Path:
    """``videos_dir/<video_key>.<ext>`` for the first extension that exists (mp4 first).

    Raises:
        DataError: no such file; the message lists what was tried.
    """
    folder = Path(videos_dir)
    for extension in VIDEO_EXTENSIONS:
        candidate = folder / f"{video_key}{extension}"
        if candidate.is_file():
            return candidate
    tried = ", ".join(f"{video_key}{ext}" for ext in VIDEO_EXTENSIONS)
    raise DataError(
        f"no video for {video_key!r} in {folder} (tried {tried})", file=str(folder), video=video_key
    )


def locate_subtitles(subtitles_dir: Path | str | None, video_key: str) -> Path | None:
    """The subtitle file of a video, or None: missing subtitles are normal, not an error."""
    if subtitles_dir is None:
        return None
    for extension in _SUBTITLE_EXTENSIONS:
        candidate = Path(subtitles_dir) / f"{video_key}{extension}"
        if candidate.is_file():
            return candidate
    return None
