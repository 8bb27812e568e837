"""How each reference encodes a frame for an OpenAI-compatible request."""

from __future__ import annotations

import base64
import io

import numpy as np
from PIL import Image

__all__ = ["jpeg_data_url", "png_data_url", "thumbnail_jpeg_data_url"]


def _data_url(image: Image.Image, fmt: str, mime: str, **options: int) -> str:
    buffer = io.BytesIO()
    image.save(buffer, format=fmt, **options)
    return f"data:{mime};base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def png_data_url(rgb: np.ndarray) -> str:
    """lmms-eval's OpenAI wrapper: PNG at full resolution, PIL defaults."""
    return _data_url(Image.fromarray(rgb, mode="RGB"), "PNG", "image/png")


def thumbnail_jpeg_data_url(rgb: np.ndarray, longest_side: int = 512) -> str:
    """VLMEvalKit's API wrapper: ``thumbnail`` into ``img_size`` (512) and JPEG at PIL's default
    quality (VLMEvalKit also stores each frame as a JPEG file first; we encode once)."""
    image = Image.fromarray(rgb, mode="RGB")
    image.thumbnail((longest_side, longest_side))
    return _data_url(image, "JPEG", "image/jpeg")


def jpeg_data_url(rgb: np.ndarray, longest_side: int, quality: int) -> str:
    """Our own encoding (the ``agent.frames`` settings), for the official protocol."""
    image = Image.fromarray(rgb, mode="RGB")
    image.thumbnail((longest_side, longest_side), Image.Resampling.BICUBIC)
    return _data_url(image, "JPEG", "image/jpeg", quality=quality)
