"""Video parts of a chat request: checked as vLLM reads them, and shown to the roles as images.

A ``video_url`` part is one of (docs/simulator.md, "Video parts"):

- a frame list, ``data:video/jpeg;base64,<jpeg 1>,<jpeg 2>,...``, described by the request's
  ``media_io_kwargs.video`` (``num_frames``, ``fps``, ``frames_indices``, ``total_num_frames``,
  ``duration``, the fields vLLM >= 0.20 reads). Where vLLM would silently misread a request (keep
  only the first ``num_frames`` frames, 32 by default; take one request-level ``frames_indices``
  for several videos) the simulator refuses it, so a harness bug shows as a 400;
- a video the server decodes: ``file:///abs/path`` (the file must exist), ``http(s)://``, or
  ``data:video/<format>;base64,<file>``, sampled with ``num_frames`` (default 32; ``-1``: every
  frame) and ``fps``.

Each video then reaches the roles as the images it amounts to, so the same frames seen give the
same behaviour as an ``images`` request: a frame list as one image part per frame (its labels are
the request's own text, as for images); a decoded video as its sampled frames, each after the
label the agent writes for an image (``FRAME_LABEL``) when the request states the video's duration
(the agent's first message does), at the agent's uniform times over the file's duration.
"""

from __future__ import annotations

import base64
import binascii
import math
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from skillharness.errors import DataError
from skillharness.llm.media import MEDIA_IO_KWARGS
from skillharness.llm.roles import FRAME_LABEL
from skillharness.sim.prompt import message_text, stated_duration
from skillharness.sim.requests import HTTPProblem
from skillharness.sim.wire import error_body
from skillharness.video import frame_layout, uniform_timestamps, video_duration

__all__ = ["JPEG_LIST", "SERVER_DEFAULT_FRAMES", "seen_request"]

JPEG_LIST = "data:video/jpeg;base64,"
SERVER_DEFAULT_FRAMES = 32  # vLLM's VideoMediaIO num_frames when nobody sets it
_JPEG_START = b"\xff\xd8\xff"


def _invalid(message: str, param: str) -> HTTPProblem:
    return HTTPProblem(400, error_body(message, "invalid_request_error", "invalid_media", param))


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _integer(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _video_kwargs(body: dict[str, Any]) -> dict[str, Any]:
    kwargs = body.get(MEDIA_IO_KWARGS)
    if kwargs is None:
        return {}
    if not isinstance(kwargs, dict) or not all(isinstance(v, dict) for v in kwargs.values()):
        raise _invalid(f"'{MEDIA_IO_KWARGS}' must be an object of objects keyed by modality", MEDIA_IO_KWARGS)
    video = kwargs.get("video", {})
    num_frames, fps = video.get("num_frames"), video.get("fps")
    if num_frames is not None and (not _integer(num_frames) or num_frames == 0):
        raise _invalid("media_io_kwargs.video.num_frames must be greater than 0 or -1", MEDIA_IO_KWARGS)
    if fps is not None and (not _number(fps) or fps <= 0):
        raise _invalid(f"media_io_kwargs.video.fps must be a positive number, got {fps!r}", MEDIA_IO_KWARGS)
    return video


def _jpeg_frames(url: str, where: str) -> list[str]:
    frames = url[len(JPEG_LIST) :].split(",")
    for index, frame in enumerate(frames):
        try:
            raw = base64.b64decode(frame, validate=True)
        except (binascii.Error, ValueError):
            raw = b""
        if not raw.startswith(_JPEG_START):
            raise _invalid(f"{where}: frame {index} of the video is not a base64 JPEG", where)
    return frames


def _check_frame_list(video: dict[str, Any], count: int, where: str) -> None:
    """The request's description of a list of ``count`` frames, as vLLM reads it."""
    kept = video.get("num_frames", SERVER_DEFAULT_FRAMES)
    if 0 < kept < count:
        raise _invalid(
            f"{where}: the video has {count} frames but media_io_kwargs.video.num_frames is {kept} "
            f"(unset: {SERVER_DEFAULT_FRAMES}); the server would keep only the first {kept}; send -1",
            MEDIA_IO_KWARGS,
        )
    total = video.get("total_num_frames", count)
    if not _integer(total) or total < max(1, count):
        raise _invalid(
            f"media_io_kwargs.video.total_num_frames must be an integer >= the {count} frames sent, "
            f"got {total!r}",
            MEDIA_IO_KWARGS,
        )
    duration = video.get("duration", 0)
    if not _number(duration) or duration < 0:
        raise _invalid(f"media_io_kwargs.video.duration must be >= 0, got {duration!r}", MEDIA_IO_KWARGS)
    indices = video.get("frames_indices", list(range(count)))
    if not isinstance(indices, list) or not all(_integer(i) for i in indices) or len(indices) != count:
        raise _invalid(
            f"{where}: media_io_kwargs.video.frames_indices must be {count} integers, one per frame",
            MEDIA_IO_KWARGS,
        )
    if any(not 0 <= i < total for i in indices) or indices != sorted(indices):
        raise _invalid(
            f"media_io_kwargs.video.frames_indices must rise within [0, total_num_frames={total}), "
            f"got {indices}",
            MEDIA_IO_KWARGS,
        )


def _local_file(url: str, where: str) -> Path:
    parts = urlsplit(url)
    path = Path(unquote(parts.path))
    if parts.netloc not in ("", "localhost") or not path.is_absolute():
        raise _invalid(f"{where}: a file URL must name an absolute local path, got {url!r}", where)
    if not path.is_file():
        raise _invalid(f"{where}: the video {path} does not exist", where)
    return path


def _decoded(url: str, video: dict[str, Any], text: str, where: str) -> list[dict[str, Any]]:
    """A video the server decodes, as the images of the frames it samples (vLLM's default rule)."""
    duration = total = None
    if url.startswith("file:"):
        path = _local_file(url, where)
        try:
            duration, total = video_duration(path), frame_layout(path).total_frames
        except DataError as exc:
            raise _invalid(f"{where}: the video {path} cannot be decoded: {exc}", where) from exc
    elif url.startswith("data:"):
        try:
            base64.b64decode(url.partition(",")[2], validate=True)
        except (binascii.Error, ValueError) as exc:
            raise _invalid(f"{where}: the video data is not base64", where) from exc
    elif not url.startswith(("http://", "https://")):
        raise _invalid(
            f"{where}: video_url.url must be an http(s), file:// or data: URL, got {url[:40]!r}", where
        )
    stated = stated_duration(text)
    duration = duration if duration is not None else stated
    asked = video.get("num_frames", SERVER_DEFAULT_FRAMES)
    count = total if asked < 0 else asked  # -1: every frame, unknown unless the file was read
    if count is None:
        return []
    if total is not None:
        count = min(count, total)
    if video.get("fps") is not None and duration:
        count = min(count, max(1, math.floor(duration * video["fps"])))
    image = {"type": "image_url", "image_url": {"url": url}}
    if stated is None or not duration:
        return [image] * count
    times = uniform_timestamps(duration, count)
    return [p for t in times for p in ({"type": "text", "text": FRAME_LABEL.format(seconds=t)}, image)]


def _jpeg_image(frame: str) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64," + frame}}


def _url(part: dict[str, Any], where: str) -> str:
    video = part.get("video_url")
    if not isinstance(video, dict) or not isinstance(video.get("url"), str):
        raise _invalid(f"{where}: a video_url part needs 'video_url': {{'url': <string>}}", where)
    return video["url"]


def seen_request(body: dict[str, Any]) -> dict[str, Any]:
    """``body`` as the roles see it: every video part replaced by the images it amounts to.

    Raises:
        HTTPProblem: 400 naming the part or field at fault.
    """
    video = _video_kwargs(body)
    messages, lists, changed = [], 0, False
    for i, message in enumerate(body["messages"]):
        content = message.get("content")
        if not isinstance(content, list) or not any(p.get("type") == "video_url" for p in content):
            messages.append(message)
            continue
        parts: list[dict[str, Any]] = []
        for j, part in enumerate(content):
            where = f"messages[{i}].content[{j}]"
            if part.get("type") != "video_url":
                parts.append(part)
            elif (url := _url(part, where)).startswith(JPEG_LIST):
                frames = _jpeg_frames(url, where)
                _check_frame_list(video, len(frames), where)
                lists += 1
                parts += [
                    {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64," + f}} for f in frames
                ]
            else:
                parts += _decoded(url, video, message_text(message), where)
        messages.append({**message, "content": parts})
        changed = True
    if lists > 1 and "frames_indices" in video:
        raise _invalid(
            f"media_io_kwargs.video.frames_indices describes one video, and this request has {lists} "
            "frame-list videos; the server would give them all the same indices",
            MEDIA_IO_KWARGS,
        )
    return {**body, "messages": messages} if changed else body
