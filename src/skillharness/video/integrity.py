"""A video read whole: its header, and its last packet read back (nothing is decoded).

A copy or download that stopped early leaves a file whose header may be intact: an mp4 written
with ``+faststart`` (the synthetic benchmark's, and most web videos') keeps its index at the front,
so opening it and reading its duration passes. The cut shows only at the end, where the index
names packets the file no longer holds. So after the header, the last timestamp is sought (any
frame, not the keyframe before it: one packet read instead of a group of pictures) and the packets
from there on are demuxed: none, a short one (FFmpeg flags it corrupt) or a read error mean the
file ends before its own index says. That costs one seek and a packet or two per video, so a pool
of 900 videos is checked in seconds, where a frame decoded at the end would cost far more.
"""

from __future__ import annotations

from pathlib import Path

import av
import av.error

from skillharness.errors import DataError
from skillharness.video._decode import VideoInfo, open_video, probe_header

__all__ = ["probe_whole"]

# How far short of the header's length the last video packet of a Matroska/WebM file may end: an
# audio track often runs on past the video by a little, so only a clearly shorter file is cut.
_SLACK_S = 1.0
_SLACK_SHARE = 0.02


def probe_whole(path: Path | str) -> VideoInfo:
    """:func:`~skillharness.video._decode.probe`, and the file read back at its end.

    Raises:
        DataError: missing, unreadable, frameless, or cut short (naming the file).
    """
    path = Path(path)
    with open_video(path) as (container, stream):
        info = probe_header(path, container, stream)
        _check_tail(path, container, stream)
        return info


def _cut_short(path: Path, why: str) -> DataError:
    return DataError(
        f"{path} is cut short ({why}): the file ends before the packets its index names; copy or "
        "download it again",
        file=str(path),
    )


def _check_tail(path: Path, container: av.container.InputContainer, stream: av.VideoStream) -> None:
    try:
        if stream.duration is not None:  # an indexed container (mp4, mov, avi): straight to the last packet
            last = (stream.start_time or 0) + stream.duration - 1
            container.seek(last, stream=stream, any_frame=True, backward=True)
        elif container.duration is not None:
            # Matroska and WebM know no per-stream length, and a seek to any frame there lands past
            # the last packet: the keyframe (cue) before the end is sought instead, and the packets
            # of its cluster read (still no decoding).
            container.seek(max(container.duration - 1, 0), backward=True)
        else:
            return  # no length to seek by; the header check is all there is
        whole, end_s = 0, 0.0
        for packet in container.demux(stream):
            if packet.size == 0:
                continue  # the empty packet that flushes the demuxer at the end
            if packet.is_corrupt:
                raise _cut_short(path, f"its last packet holds {packet.size} byte(s), fewer than indexed")
            whole += 1
            if packet.pts is not None and packet.time_base is not None:
                end_s = max(end_s, float((packet.pts + (packet.duration or 0)) * packet.time_base))
    except av.error.FFmpegError as exc:
        raise _cut_short(path, f"reading its end failed: {exc}") from exc
    if whole == 0:
        raise _cut_short(path, "no packet at its end")
    if stream.duration is None and container.duration is not None:
        # Without an index the demuxer just stops where the file does: the packets must reach the
        # length the header states, give or take what another stream (audio) may run past the video.
        stated_s = container.duration / av.time_base
        if end_s < stated_s - max(_SLACK_S, _SLACK_SHARE * stated_s):
            raise _cut_short(
                path, f"its packets end at {end_s:.1f} s of the {stated_s:.1f} s its header states"
            )
