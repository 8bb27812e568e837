"""Finding a question's video and subtitle files from the folders the data config names."""

from __future__ import annotations

from pathlib import Path

from skillharness.errors import DataError

__all__ = ["VIDEO_EXTENSIONS", "locate_subtitles", "locate_video", "question_subtitles"]

VIDEO_EXTENSIONS = (".mp4", ".mkv", ".webm", ".mov", ".avi")
_SUBTITLE_EXTENSIONS = (".srt", ".vtt", ".ass", ".ssa")


def locate_video(videos_dir: Path | str, video_key: str, *, task: str | None = None) -> Path:
    """``videos_dir/<video_key>.<ext>`` for the first extension that exists (mp4 first), or
    ``videos_dir/<video_key>`` when the key already names a video file (MVBench's ``"x.mp4"``).

    Raises:
        DataError: no such file (the message lists what was tried), or a folder of frames where a
            video should be (named with ``task``, the question's task type, and what to do).
    """
    folder = Path(videos_dir)
    named = folder / video_key
    if named.is_dir():
        _refuse_frame_folder(named, video_key, task)
    if named.suffix.lower() in VIDEO_EXTENSIONS and named.is_file():
        return named
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


def question_subtitles(subtitles_dir: Path | None, own_path: str | None, video_key: str) -> Path | None:
    """A question's subtitle file: its own ``subtitle_path`` (relative to ``subtitles_dir``), else
    ``<video_key>.srt`` (or .vtt/.ass/.ssa); None when there is none."""
    if own_path:
        path = Path(own_path)
        if not path.is_absolute() and subtitles_dir is not None:
            path = subtitles_dir / path
        return path if path.is_file() else None
    return locate_subtitles(subtitles_dir, video_key)


def _refuse_frame_folder(path: Path, video_key: str, task: str | None) -> None:
    # Some benchmarks ship a task as frame images (MVBench's Episodic Reasoning: TVQA frames at
    # 3 fps). Sampling by time needs a video's clock, which a folder of images does not have.
    of_task = f" (task {task!r})" if task else ""
    raise DataError(
        f"{path}: video {video_key!r}{of_task} is a folder of frame images, not a video file; encode "
        f"it into one first (e.g. ffmpeg -framerate 3 -pattern_type glob -i '{path}/*.jpg' -pix_fmt "
        f"yuv420p '{path}.mp4', at the rate the frames were taken) or leave the task out of the split "
        "(--exclude-task-types)",
        file=str(path),
        video=video_key,
        task=task or "",
    )
