"""How sampled frames travel to one endpoint: the ``llm.endpoints[].media`` section.

Three transports (docs/agent.md, "How frames reach the model"):

- ``images``: one timestamp text part and one ``image_url`` JPEG part per frame (every
  OpenAI-compatible vision server takes it);
- ``video_frames``: the same JPEG frames as one ``video_url`` part,
  ``data:video/jpeg;base64,<frame 1>,<frame 2>,...``, with the request-level ``media_io_kwargs``
  naming their decoded indices, the source frame rate, frame count and duration (vLLM >= 0.20);
- ``video_url``: a ``file://`` or http(s) URL of the video, decoded and sampled by the server, the
  frame count in ``media_io_kwargs`` (vLLM >= 0.18).

The choice belongs to the server, so it is set per endpoint; the replicas of one run must agree
(:class:`~skillharness.llm.config.LLMConfig` checks), because a request is built before the router
picks the replica it goes to.
"""

from __future__ import annotations

from enum import StrEnum
from urllib.parse import urlsplit

from pydantic import Field, field_validator, model_validator

from skillharness.util.model import StrictModel

__all__ = ["MEDIA_IO_KWARGS", "FrameTransport", "MediaConfig"]

# Top-level request-body key of the media loaders' per-request settings, keyed by modality
# (vLLM's chat request field since 0.18; other servers ignore or refuse it).
MEDIA_IO_KWARGS = "media_io_kwargs"


class FrameTransport(StrEnum):
    """How the first message's frames reach the model."""

    IMAGES = "images"
    VIDEO_FRAMES = "video_frames"
    VIDEO_URL = "video_url"


class MediaConfig(StrictModel):
    """How frames reach this endpoint's model."""

    transport: FrameTransport = Field(
        FrameTransport.IMAGES,
        description="images (one image part per frame; any vision server), video_frames (the sampled "
        "JPEG frames as one video part with their indices and the source fps; vLLM >= 0.20) or "
        "video_url (the server decodes the video file itself; vLLM >= 0.18). All endpoints must agree.",
    )
    url_base: str | None = Field(
        None,
        description="video_url only: the http(s) URL the server reads data.videos_dir under (a video's "
        "path below that folder is appended, percent-encoded); unset sends file:///absolute/path "
        "(vLLM needs --allowed-local-media-path).",
    )
    fps: float | None = Field(
        None,
        gt=0,
        le=60,
        description="video_url only: also ask the server to sample at this rate (frames per second) "
        "besides num_frames (vLLM's Qwen3-VL loader reads only the rate); unset sends num_frames only.",
    )

    @field_validator("url_base")
    @classmethod
    def _http_base(cls, value: str | None) -> str | None:
        if value is None:
            return None
        parts = urlsplit(value.strip())
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"{value!r} is not an http(s) URL with a host (e.g. http://files:9000/videos/)")
        return value.strip().rstrip("/") + "/"

    @model_validator(mode="after")
    def _video_url_settings(self) -> MediaConfig:
        stray = [name for name in ("url_base", "fps") if getattr(self, name) is not None]
        if stray and self.transport is not FrameTransport.VIDEO_URL:
            raise ValueError(
                f"{' and '.join(stray)} only apply to transport video_url (this endpoint's is "
                f"{self.transport.value}): remove them or set transport: video_url"
            )
        return self

    @property
    def sends_video(self) -> bool:
        """Whether the first message's frames travel as a video part (with ``media_io_kwargs``)."""
        return self.transport is not FrameTransport.IMAGES
