"""The diagnosis fingerprint: what it covers, and that an unchanged case never calls the model again."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml
from diagnose_support import AGENT, diagnose_world, rollout
from train_support import train_context, write_train_config

from bench_support import Bench
from skillharness.data.questions import slugify
from skillharness.llm.types import SamplingParams
from skillharness.sim import SimServer
from skillharness.skills import Bundle
from skillharness.store import DiagnosisRow
from skillharness.train.diagnose.diagnoser import JUDGED, JudgeIdentity, diagnose, diagnosis_fingerprint
from skillharness.train.roles.templates import packaged_prompts

pytestmark = pytest.mark.sim_world(diagnose_world(4))

COLD, WARM = SamplingParams(temperature=0.0), SamplingParams(temperature=0.7)
JUDGE = JudgeIdentity("judge", "t" * 64, "sim-vl", COLD)
KEY = ("run-1", "001-1", 0)


def test_fingerprint_covers_judge_template_skill_text_and_prediction() -> None:
    base = diagnosis_fingerprint(KEY, "h" * 64, JUDGE)
    assert base == diagnosis_fingerprint(KEY, "h" * 64, JUDGE)
    variants = [
        diagnosis_fingerprint(("run-2", "001-1", 0), "h" * 64, JUDGE),
        diagnosis_fingerprint(("run-1", "001-2", 0), "h" * 64, JUDGE),
        diagnosis_fingerprint(("run-1", "001-1", 1), "h" * 64, JUDGE),
        diagnosis_fingerprint(KEY, "g" * 64, JUDGE),
        diagnosis_fingerprint(KEY, "h" * 64, JudgeIdentity("judge", "u" * 64, "sim-vl", JUDGE.sampling)),
        diagnosis_fingerprint(KEY, "h" * 64, JudgeIdentity("span_eval_user", "t" * 64, "sim-vl", COLD)),
        diagnosis_fingerprint(KEY, "h" * 64, JudgeIdentity("judge", "t" * 64, "other", JUDGE.sampling)),
        diagnosis_fingerprint(KEY, "h" * 64, JudgeIdentity("judge", "t" * 64, "sim-vl", WARM)),
        diagnosis_fingerprint(KEY, "h" * 64, None),
    ]
    assert len({base, *variants}) == len(variants) + 1


def _edited_prompts(tmp_path: Path) -> Path:
    folder = tmp_path / "prompts"
    shutil.copytree(Path(str(packaged_prompts())), folder)
    judge = folder / "judge.md"
    text = judge.read_text()
    judge.write_text(text.replace("Diagnose this failure.", "Diagnose this failure carefully."))
    return folder


def _edited_skill(bundle_dir: Path, tmp_path: Path, slug: str) -> Bundle:
    folder = tmp_path / "bundle-edited"
    shutil.copytree(bundle_dir, folder)
    skill = folder / "skills" / f"{slug}.md"
    skill.write_text(skill.read_text() + "\n- One more reference line.\n")
    return Bundle.load(folder)


async def test_unchanged_cases_skip_the_model_changed_template_or_skill_judges_again(
    tmp_path: Path, bench: Bench, sim: SimServer
) -> None:
    train = {"diagnosis": {"max_excluded_share": 1.0}}
    path = write_train_config(tmp_path, bench, sim, agent=AGENT, train=train)
    bundle = Bundle.load(bench.bundle)
    async with train_context(path) as ctx:
        run_id, predictions = await rollout(ctx, bundle)
        first = await diagnose(ctx, bundle, run_id, predictions)
        judged = [d for d in first.diagnoses if d.cause in JUDGED]
        assert judged
        assert first.judge_calls == len(judged)

        sim.reset_stats()
        again = await diagnose(ctx, bundle, run_id, predictions)
        assert again.judge_calls == 0
        assert again.fingerprint_hits == len(judged)
        assert sim.stats()["requests"] == 0  # not even a cached reply was asked for

        task_type = judged[0].case.question.task_type
        edited = _edited_skill(bench.bundle, tmp_path, slugify(task_type))
        sim.reset_stats()
        after_skill = await diagnose(ctx, edited, run_id, predictions)
        of_type = [d for d in judged if d.case.question.task_type == task_type]
        assert after_skill.judge_calls == len(of_type)
        assert after_skill.fingerprint_hits == len(judged) - len(of_type)
        assert sim.stats()["roles"].get("judge") == len(of_type)

    doc = yaml.safe_load(path.read_text())
    doc["train"]["prompts_dir"] = str(_edited_prompts(tmp_path))
    other = tmp_path / "edited-template.yaml"
    other.write_text(yaml.safe_dump(doc))
    sim.reset_stats()
    async with train_context(other) as ctx:
        after_template = await diagnose(ctx, bundle, run_id, predictions)
        rows = ctx.store.select(DiagnosisRow, run_id=run_id)
    assert after_template.judge_calls == len(judged)
    assert after_template.fingerprint_hits == 0
    assert sim.stats()["roles"].get("judge") == len(judged)
    # Each judge (template, skill text) keeps its own rows: three generations of the judged cases.
    judged_rows = [r for r in rows if r.cause in {c.value for c in JUDGED} or r.cause == "judge_failed"]
    assert len(judged_rows) == 2 * len(judged) + len(of_type)
