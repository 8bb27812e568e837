"""The gate package's public surface is deliberate and pinned."""

from __future__ import annotations

import skillharness.train.gate as gate


def test_public_surface_is_sorted_and_importable() -> None:
    assert gate.__all__ == sorted(gate.__all__, key=lambda name: (not name.isupper(), name))
    for name in gate.__all__:
        assert getattr(gate, name) is not None


def test_training_loop_entry_points_exist() -> None:
    expected = {
        "Ladder",
        "Decision",
        "DecisionKind",
        "PairedOutcome",
        "INFRA",
        "ensure_reachable",
        "mcnemar_guard",
    }
    assert expected <= set(gate.__all__)


def test_every_gate_config_field_is_documented() -> None:
    from skillharness.train.config import GateConfig

    for name, field in GateConfig.model_fields.items():
        assert field.description, name
