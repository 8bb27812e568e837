"""The agent's public surface, and its place in the layering (it never imports a higher layer)."""

from __future__ import annotations

import subprocess
import sys

import skillharness.agent


def test_public_surface_is_pinned() -> None:
    assert skillharness.agent.__all__ == sorted(skillharness.agent.__all__)
    assert set(skillharness.agent.__all__) == {
        "Agent", "AgentConfig", "BundleSlot", "BundleView", "FrameSource", "InvalidatingChatModel",
        "LmmsEvalTask", "LocalVideos", "Normalized", "Prediction", "PredictionStatus", "ProtocolName",
        "Refusal", "StepRole", "SubtitleSource", "TraceSink", "TraceStep", "answer_all",
        "check_bundle_slot", "check_questions", "largest_request", "lmms_eval_letter", "lmms_eval_task",
        "normalize_answer", "official_letter", "question_window", "refusal_of", "vlmevalkit_letter",
    }  # fmt: skip


def test_the_agent_imports_no_higher_layer() -> None:
    code = (
        "import sys, skillharness.agent, skillharness.agent.video\n"
        "print(sorted({m.split('.')[1] for m in sys.modules if m.startswith('skillharness.')}))"
    )
    loaded = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    for higher in ("store", "skills", "train", "eval", "sim", "commands"):
        assert f"'{higher}'" not in loaded
