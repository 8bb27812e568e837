"""Helpers that write real test videos with PyAV (imported by the video tests and their conftest).

Frame ``i`` of a test video carries its own index in two flat blocks (high and low nibble as grey
levels), so a test can read back *which* frame it got, independent of the code under test.
The rest of the picture is seeded noise, so neighbouring frames really differ.
"""

from __future__ import annotations

from pathlib import Path

import av
import numpy as np

__all__ = ["HEIGHT", "WIDTH", "frame_index", "frame_pixels", "write_audio_only", "write_video"]

WIDTH, HEIGHT = 96, 64


def frame_pixels(index: int) -> np.ndarray:
    rng = np.random.default_rng(index)
    pixels = (rng.integers(0, 256, (HEIGHT, WIDTH, 3), dtype=np.uint8) // 4) + 64
    pixels[:16, :16] = 20 + (index // 16 % 16) * 14  # the index modulo 256
    pixels[:16, 16:32] = 20 + (index % 16) * 14
    return pixels


def frame_index(rgb: np.ndarray) -> int:
    """Read back the index (modulo 256) a test frame carries, robust to small encoder errors."""
    high = round((float(rgb[4:12, 4:12].mean()) - 20) / 14)
    low = round((float(rgb[4:12, 20:28].mean()) - 20) / 14)
    return high * 16 + low


def write_video(
    path: Path, *, seconds: float = 10.0, fps: int = 25, keyframe_s: float = 2.0, faststart: bool = True
) -> Path:
    """An H.264 mp4 with B-frames and a keyframe every ``keyframe_s`` seconds."""
    gop = round(fps * keyframe_s)
    options = {"movflags": "+faststart"} if faststart else {}
    with av.open(str(path), "w", format="mp4", container_options=options) as out:
        stream = out.add_stream("libx264", rate=fps)
        stream.width, stream.height, stream.pix_fmt = WIDTH, HEIGHT, "yuv420p"
        stream.codec_context.thread_count = 1
        stream.options = {
            "preset": "veryfast",
            "crf": "16",
            "x264-params": f"keyint={gop}:min-keyint={gop}:scenecut=0",
        }
        for index in range(round(seconds * fps)):
            for packet in stream.encode(av.VideoFrame.from_ndarray(frame_pixels(index), format="rgb24")):
                out.mux(packet)
        for packet in stream.encode():
            out.mux(packet)
    return path


def write_audio_only(path: Path, seconds: float = 1.0) -> Path:
    rate = 16000
    with av.open(str(path), "w", format="mp4") as out:
        stream = out.add_stream("aac", rate=rate)
        samples = (np.sin(np.arange(int(rate * seconds)) * 0.05) * 0.3).astype(np.float32)
        for start in range(0, len(samples), 1024):
            chunk = samples[start : start + 1024].reshape(1, -1)
            frame = av.AudioFrame.from_ndarray(chunk, format="fltp", layout="mono")
            frame.sample_rate = rate
            for packet in stream.encode(frame):
                out.mux(packet)
        for packet in stream.encode():
            out.mux(packet)
    return path
