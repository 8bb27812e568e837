"""Frame-index rules of the reference evaluations: which decoded frames of a video are shown.

Every rule maps a video's decoded frame count (and, for fps sampling, its frame rate) to frame
indices, exactly as the reference computes them; the indices are then decoded by position (see
:func:`skillharness.video.frames_by_index`), never approximated by timestamps.

- lmms-eval's OpenAI-compatible wrapper (``lmms_eval/models/simple/openai_compatible.py``,
  ``encode_video``): ``numpy.linspace(0, n - 1, k, dtype=int)``, then the last frame appended
  when it is missing (with ``linspace`` it never is, so this sends ``k`` frames).
- lmms-eval's subtitle selection (``lmms_eval/tasks/videomme/utils.py``): the same ``linspace``
  over ``frame_num`` (32) indices, without the append.
- VLMEvalKit (``vlmeval/dataset/videomme.py``, ``save_video_frames``): ``int(i * n / (k + 1))``
  for ``i = 1..k``; or, sampling by fps, ``int(i * native_fps / fps)`` for
  ``i < int(n / native_fps * fps)``.
"""

from __future__ import annotations

import numpy as np

from skillharness.errors import DataError

__all__ = ["linspace_indices", "openai_wrapper_indices", "vlmevalkit_fps_indices", "vlmevalkit_indices"]


def _check(total_frames: int, count: int) -> None:
    if total_frames < 1:
        raise DataError(f"a video with {total_frames} decoded frames has nothing to sample")
    if count < 1:
        raise DataError(f"zero frames requested (count={count}); ask for at least one")


def linspace_indices(total_frames: int, count: int) -> tuple[int, ...]:
    """``numpy.linspace(0, total_frames - 1, count, dtype=int)`` (truncation toward zero)."""
    _check(total_frames, count)
    return tuple(int(i) for i in np.linspace(0, total_frames - 1, count, dtype=int))


def openai_wrapper_indices(total_frames: int, count: int = 10) -> tuple[int, ...]:
    """lmms-eval's OpenAI-compatible video rule: ``linspace`` indices plus the last frame if absent."""
    indices = linspace_indices(total_frames, count)
    if total_frames - 1 not in indices:
        indices = (*indices, total_frames - 1)
    return indices


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
