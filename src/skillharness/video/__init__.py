"""Video layer: JPEG frames sampled from video files (seek-based, cached on disk) and subtitles."""

from skillharness.video._decode import DecoderStats, decoder_stats
from skillharness.video.cache import FrameCache, default_cache_dir
from skillharness.video.config import FramesConfig
from skillharness.video.frames import (
    FrameSampler,
    range_timestamps,
    uniform_timestamps,
    video_duration,
    whole_video_duration,
    window_span,
)
from skillharness.video.indexed import FrameLayout, frame_layout, frames_by_index
from skillharness.video.locate import locate_subtitles, locate_video, question_subtitles
from skillharness.video.subtitles import SubtitleLine, Subtitles, load_subtitles
from skillharness.video.types import Frame, FrameSet, Window
from skillharness.video.workers import DecodePool, usable_cores

__all__ = [
    "DecodePool",
    "DecoderStats",
    "Frame",
    "FrameCache",
    "FrameLayout",
    "FrameSampler",
    "FrameSet",
    "FramesConfig",
    "SubtitleLine",
    "Subtitles",
    "Window",
    "decoder_stats",
    "default_cache_dir",
    "frame_layout",
    "frames_by_index",
    "load_subtitles",
    "locate_subtitles",
    "locate_video",
    "question_subtitles",
    "range_timestamps",
    "uniform_timestamps",
    "usable_cores",
    "video_duration",
    "whole_video_duration",
    "window_span",
]
