"""How each reference encodes a frame for an OpenAI-compatible request."""

from __future__ import annotations

import base64
import io
import math

import numpy as np
from PIL import Image

__all__ = [
    "jpeg_data_url",
    "qwen_vl_png_data_url",
    "qwen_vl_video_size",
    "vlmevalkit_jpeg_data_url",
]

# qwen-vl-utils 0.0.14 video constants: 14 px patches merged 2x2, 128..768 tokens a frame, and a
# total budget of 90 % of MODEL_SEQ_LEN (128000 unless the environment says otherwise) tokens.
_FACTOR = 28
_MIN_PIXELS = 128 * _FACTOR * _FACTOR
_FRAME_MAX_PIXELS = 768 * _FACTOR * _FACTOR
_TOTAL_PIXELS = 128000 * _FACTOR * _FACTOR * 0.9


def _data_url(image: Image.Image, fmt: str, mime: str, **options: int) -> str:
    buffer = io.BytesIO()
    image.save(buffer, format=fmt, **options)
    return f"data:{mime};base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def vlmevalkit_jpeg_data_url(rgb: np.ndarray, min_edge: int = 100) -> str:
    """VLMEvalKit main's API wrapper (``img_size=-1``): no resize, JPEG at PIL's default quality;
    a frame whose shorter side is under ``min_edge`` (``VLMEVAL_MIN_IMAGE_EDGE``, 100) is scaled up
    by ``min_edge / shorter side`` (truncated sizes, PIL's default filter) and encoded again."""
    image = Image.fromarray(rgb, mode="RGB")
    if min(image.size) < min_edge:
        factor = min_edge / min(image.size)
        image = image.resize((int(image.width * factor), int(image.height * factor)))
    return _data_url(image, "JPEG", "image/jpeg")


def jpeg_data_url(rgb: np.ndarray, longest_side: int, quality: int) -> str:
    """Our own encoding (the ``agent.frames`` settings), for the official protocol."""
    image = Image.fromarray(rgb, mode="RGB")
    image.thumbnail((longest_side, longest_side), Image.Resampling.BICUBIC)
    return _data_url(image, "JPEG", "image/jpeg", quality=quality)


def qwen_vl_video_size(height: int, width: int, nframes: int) -> tuple[int, int]:
    """``fetch_video``'s ``smart_resize`` target (height, width) for ``nframes`` frames: sides
    multiples of 28, the pixel count inside the per-frame budget, the aspect ratio kept."""
    max_pixels = max(min(_FRAME_MAX_PIXELS, _TOTAL_PIXELS / nframes * 2), int(_MIN_PIXELS * 1.05))
    h_bar = max(_FACTOR, round(height / _FACTOR) * _FACTOR)
    w_bar = max(_FACTOR, round(width / _FACTOR) * _FACTOR)
    if h_bar * w_bar > max_pixels:
        beta = math.sqrt((height * width) / max_pixels)
        h_bar = math.floor(height / beta / _FACTOR) * _FACTOR
        w_bar = math.floor(width / beta / _FACTOR) * _FACTOR
    elif h_bar * w_bar < _MIN_PIXELS:
        beta = math.sqrt(_MIN_PIXELS / (height * width))
        h_bar = math.ceil(height * beta / _FACTOR) * _FACTOR
        w_bar = math.ceil(width * beta / _FACTOR) * _FACTOR
    return h_bar, w_bar


def qwen_vl_png_data_url(rgb: np.ndarray, nframes: int) -> str:
    """lmms-eval's chat wrapper: the frame resized to :func:`qwen_vl_video_size` (bicubic; torchvision
    resizes with antialiasing, PIL's filter is close but not byte-identical), then PNG."""
    height, width = rgb.shape[:2]
    size_h, size_w = qwen_vl_video_size(height, width, nframes)
    image = Image.fromarray(rgb, mode="RGB").resize((size_w, size_h), Image.Resampling.BICUBIC)
    return _data_url(image, "PNG", "image/png")
