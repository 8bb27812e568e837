"""Frame-index rules of the reference evaluations: which decoded frames of a video are shown.

Every rule maps a video's decoded frame count (and, for fps sampling, its frame rate) to frame
indices, exactly as the reference computes them; the indices are then decoded by position (see
:func:`skillharness.video.frames_by_index`), never approximated by timestamps.

- lmms-eval v0.7.2's default OpenAI wrapper (the chat one, ``lmms_eval/protocol.py``
  ``to_openai_messages``) hands the video to ``qwen_vl_utils.fetch_video`` with ``nframes=k``
  (qwen-vl-utils 0.0.14): ``k`` rounded to an even count, then
  ``torch.linspace(0, n - 1, k).round()`` in float32 (:func:`qwen_vl_indices`).
- lmms-eval's subtitle selection (``lmms_eval/tasks/videomme/utils.py``): the same ``linspace``
  over ``frame_num`` (32) indices, without the append.
- The frame tool the Video-MME README links (``look4u-ok/video-slicer`` ``slice_and_extract.py``,
  ``get_seq_frames``): ``k`` segments of ``(n - 1) / k`` frames, the middle of each
  (:func:`segment_middle_indices`).
- VLMEvalKit (``vlmeval/dataset/videomme.py``, ``save_video_frames``): ``int(i * n / (k + 1))``
  for ``i = 1..k``; or, sampling by fps, ``int(i * native_fps / fps)`` for
  ``i < int(n / native_fps * fps)``.
"""

from __future__ import annotations

import numpy as np

from skillharness.errors import DataError

__all__ = [
    "linspace_indices",
    "qwen_vl_frame_count",
    "qwen_vl_indices",
    "segment_middle_indices",
    "vlmevalkit_fps_indices",
    "vlmevalkit_indices",
]


def _check(total_frames: int, count: int) -> None:
    if total_frames < 1:
        raise DataError(f"a video with {total_frames} decoded frames has nothing to sample")
    if count < 1:
        raise DataError(f"{count} frames requested; ask for at least one")


def linspace_indices(total_frames: int, count: int) -> tuple[int, ...]:
    """``numpy.linspace(0, total_frames - 1, count, dtype=int)`` (truncation toward zero)."""
    _check(total_frames, count)
    return tuple(int(i) for i in np.linspace(0, total_frames - 1, count, dtype=int))


def qwen_vl_frame_count(count: int) -> int:
    """``smart_nframes`` with ``nframes``: the count rounded to the nearest even number."""
    return round(count / 2) * 2


def qwen_vl_indices(total_frames: int, count: int) -> tuple[int, ...]:
    """``torch.linspace(0, total - 1, nframes).round().long()`` as torch computes it: float32, the
    first half counted up from the start and the second half down from the end, rounded half to
    even. qwen_vl_utils refuses fewer than 2 or more than ``total_frames`` frames."""
    _check(total_frames, count)
    steps = qwen_vl_frame_count(count)
    if not 2 <= steps <= total_frames:
        raise DataError(
            f"qwen_vl_utils samples {steps} frames (from {count}); a video of {total_frames} decoded "
            "frames cannot give them",
            total_frames=total_frames,
        )
    start, end = np.float32(0), np.float32(total_frames - 1)
    step = (end - start) / np.float32(steps - 1)
    values = [
        start + step * np.float32(i) if i < steps // 2 else end - step * np.float32(steps - i - 1)
        for i in range(steps)
    ]
    return tuple(int(v) for v in np.rint(np.array(values, dtype=np.float32)))


def segment_middle_indices(total_frames: int, count: int) -> tuple[int, ...]:
    """``(round(s * i) + round(s * (i + 1))) // 2`` for ``s = (total - 1) / count``, ``i < count``
    (numpy rounding: half to even)."""
    _check(total_frames, count)
    size = (total_frames - 1) / count
    return tuple((int(np.round(size * i)) + int(np.round(size * (i + 1)))) // 2 for i in range(count))


def vlmevalkit_indices(total_frames: int, count: int) -> tuple[int, ...]:
    """VLMEvalKit's ``nframe`` rule: ``int(i * total / (count + 1))`` for ``i = 1..count``."""
    _check(total_frames, count)
    step = total_frames / (count + 1)
    return tuple(int(i * step) for i in range(1, count + 1))


def vlmevalkit_fps_indices(total_frames: int, native_fps: float, fps: float) -> tuple[int, ...]:
    """VLMEvalKit's ``fps`` rule: every ``native_fps / fps``-th frame over the whole video."""
    if native_fps <= 0 or fps <= 0:
        raise DataError(f"frame rates must be positive (video {native_fps}, sampling {fps})")
    _check(total_frames, 1)
    required = int(total_frames / native_fps * fps)
    step = native_fps / fps
    return tuple(int(i * step) for i in range(required))
