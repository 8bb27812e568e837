"""``train/`` is grouped by the steps of SPEC section 4.3, each sub-package below the ones that use it.

A module of a sub-package imports only its own sub-package and those earlier in ``ORDER`` (``config``
is the root module every step reads); each sub-package says its job in a one-line docstring and pins
its public names in ``__all__``.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

TRAIN = Path(__file__).resolve().parents[2] / "src" / "skillharness" / "train"
ORDER = ("config", "gate", "roles", "state", "diagnose", "evolve", "validate", "preflight", "loop")

# What each sub-package offers the others (and the layers above train). Adding a name is a decision.
PINNED = {
    "roles": frozenset(
        {
            "CaseView",
            "ConsolidateReply",
            "EditSetView",
            "JudgeReply",
            "MomentumReply",
            "PromptTemplates",
            "RankReply",
            "RenderedPrompt",
            "ReplyRefusal",
            "SpanView",
            "TEMPLATE_SPECS",
            "check_templates",
            "load_templates",
            "packaged_prompts",
            "parse_reply",
        }
    ),
    "state": frozenset(
        {
            "AcceptedEdit",
            "CHECKPOINT_FILE",
            "CHECKPOINT_SCHEMA_VERSION",
            "Candidate",
            "Case",
            "CasePack",
            "Cause",
            "Checkpoint",
            "Diagnosis",
            "DrawPlan",
            "GateOutcome",
            "GateReason",
            "InfraOutage",
            "OpenCandidate",
            "RefusalTally",
            "Refused",
            "RejectedEdit",
            "RequestsRefused",
            "RetiredTarget",
            "RoleAnswer",
            "RoleCaller",
            "RunState",
            "Spent",
            "Standing",
            "StopGuard",
            "TrainContext",
            "TrainingStopped",
            "check_infra",
            "check_refusals",
            "distinct_samples",
            "draw_temperature",
            "evolve_calls",
            "gate_budget",
            "plan_draws",
            "plan_guard_draws",
            "role_sampling",
        }
    ),
    "diagnose": frozenset(
        {
            "COLUMNS",
            "DiagnosisReport",
            "JUDGED",
            "JudgeIdentity",
            "STEP_BUDGET_EXHAUSTED",
            "build_case_packs",
            "c1_from_prediction",
            "c2_from_trace",
            "case_view",
            "check_excluded_share",
            "defect_confusion",
            "diagnose",
            "diagnosis_fingerprint",
            "judge_finding",
            "run_waterfall",
            "summarize_trace",
            "trace_spans",
            "video_duration_s",
            "waterfall_table",
        }
    ),
    "evolve": frozenset(
        {
            "EvolveRefusal",
            "edit_limits",
            "evolve",
            "evolve_all",
            "merge_partner",
            "merged_proposal",
            "remember",
            "remember_refusal",
            "remember_rejection",
            "render_evolve_prompts",
            "target_text",
            "under_test",
            "without_landed",
        }
    ),
    "validate": frozenset(
        {
            "Arms",
            "BaselineCache",
            "ClassCoverage",
            "FinalValScore",
            "GateScope",
            "Screened",
            "TrainedClasses",
            "VAL_GAIN_LABEL",
            "ValScore",
            "class_coverage",
            "draw_plan",
            "final_val_score",
            "gate_scope",
            "guard_size",
            "infra_outage",
            "new_ladder",
            "observation_rows",
            "paired_outcomes",
            "plan_evidence",
            "plan_trained_classes",
            "score_predictions",
            "screen_packs",
            "trained_classes",
            "val_score",
            "validate",
            "verdict",
            "wealth_after",
        }
    ),
    "preflight": frozenset(
        {
            "CHECKS",
            "CheckStatus",
            "PreflightReport",
            "endpoint_problems",
            "run_preflight",
            "run_preflight_async",
            "seed_ignored",
            "spending_summary",
        }
    ),
    "loop": frozenset(
        {
            "RunEnded",
            "TrainOutcome",
            "TrainProgress",
            "TrainRequest",
            "candidate_of",
            "checked_seed_mode",
            "decide",
            "default_train_run_id",
            "ended_run",
            "is_stale",
            "open_candidate",
            "open_training",
            "plan_steps",
            "rebase",
            "run_folder",
            "run_training",
            "trained_task_types",
        }
    ),
}


def _train_imports(path: Path) -> list[tuple[int, str]]:
    """``(line, sub-package)`` of every ``skillharness.train.<sub>`` import in ``path``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        modules = []
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules = [node.module]
        elif isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        for module in modules:
            parts = module.split(".")
            if parts[:2] == ["skillharness", "train"] and len(parts) > 2:
                found.append((node.lineno, parts[2]))
    return found


def _upward(path: Path, own: str) -> list[str]:
    rank = ORDER.index(own)
    return [
        f"{path.relative_to(TRAIN)}:{line} imports train.{sub}"
        for line, sub in _train_imports(path)
        if sub not in ORDER or ORDER.index(sub) > rank
    ]


def test_every_module_lives_in_a_sub_package_of_the_order() -> None:
    loose = sorted(p.name for p in TRAIN.glob("*.py") if p.stem not in ("__init__", "config"))
    assert loose == []
    packages = sorted(p.name for p in TRAIN.iterdir() if (p / "__init__.py").is_file())
    assert packages == sorted(ORDER[1:])


def test_no_sub_package_imports_one_above_it() -> None:
    found = [
        v for sub in ORDER[1:] for path in sorted((TRAIN / sub).rglob("*.py")) for v in _upward(path, sub)
    ]
    found += _upward(TRAIN / "config.py", "config")
    assert found == []


def test_the_check_sees_an_upward_import(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(
        "from skillharness.train.loop.step import run_step\nfrom skillharness.train.gate import x\n"
    )
    assert [line for line, _ in _train_imports(probe)] == [1, 2]
    assert len([sub for _, sub in _train_imports(probe) if ORDER.index(sub) > ORDER.index("state")]) == 1


def test_each_sub_package_says_its_job_in_one_line_and_pins_its_surface() -> None:
    for sub, pinned in PINNED.items():
        package = importlib.import_module(f"skillharness.train.{sub}")
        doc = (package.__doc__ or "").strip()
        assert doc, f"train.{sub} has no docstring"
        assert "\n" not in doc, f"train.{sub}: its docstring is one line"
        exported = package.__all__
        assert len(exported) == len(set(exported))
        assert set(exported) == pinned, f"train.{sub}.__all__ changed: {sorted(set(exported) ^ pinned)}"
        assert all(hasattr(package, name) for name in exported), f"train.{sub} lacks a name it exports"
