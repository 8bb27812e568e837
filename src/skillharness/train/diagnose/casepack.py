"""Case packs: a step's diagnoses grouped by the text they are evidence against (SPEC 4.3.3).

Only evidence with a target enters a pack: ``defect`` (skill body, system prompt or tool, as the
judge attributed it), ``format`` (system prompt or ``submit_answer``) and ``tool`` (that tool's
description). Lapses, uncertain verdicts, failed judgements, degraded and infra cases have no
target and never reach any pack (audit P1-5). A skill body's pack holds defects only. Each pack
keeps at most ``max_cases`` cases, drawn without replacement by a seeded shuffle, so the same
diagnoses, seed and salt always give the same packs. The pack's question ids are the evidence
the gate later leaves out of its draws.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterable

from skillharness.errors import ConfigError
from skillharness.skills import EditTarget
from skillharness.train.state.records import CasePack, Cause, Diagnosis

__all__ = ["PACKED_CAUSES", "build_case_packs"]

PACKED_CAUSES = frozenset({Cause.DEFECT, Cause.FORMAT, Cause.TOOL})
_ORDER = {"skill": 0, "system": 1, "tools": 2}  # packs come out skill bodies first, then system, tools


def _admitted(diagnosis: Diagnosis, target: EditTarget) -> bool:
    return diagnosis.cause in PACKED_CAUSES and (target.kind != "skill" or diagnosis.cause is Cause.DEFECT)


def _case_key(diagnosis: Diagnosis) -> tuple[str, str, int]:
    p = diagnosis.case.prediction
    return (p.question_id, p.run_id, p.sample_idx)


def _rng(seed: int, salt: str, target: EditTarget) -> random.Random:
    digest = hashlib.sha256(f"casepack\x00{seed}\x00{salt}\x00{target.label()}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def build_case_packs(
    diagnoses: Iterable[Diagnosis], *, max_cases: int, seed: int, salt: str
) -> list[CasePack]:
    """One pack per target with evidence, at most ``max_cases`` cases each, deterministic.

    ``salt`` varies the choice between steps (e.g. ``"e1s3"``); the input order does not matter.
    """
    if max_cases < 1:
        raise ConfigError(f"train.casepack.max_cases must be at least 1, got {max_cases}", key="max_cases")
    grouped: dict[str, list[Diagnosis]] = {}
    targets: dict[str, EditTarget] = {}
    for diagnosis in diagnoses:
        target = diagnosis.target
        if target is None or not _admitted(diagnosis, target):
            continue
        label = target.label()
        targets[label] = target
        grouped.setdefault(label, []).append(diagnosis)
    packs = []
    for label in sorted(grouped, key=lambda lb: (_ORDER[targets[lb].kind], lb)):
        cases = sorted(grouped[label], key=_case_key)
        if len(cases) > max_cases:
            cases = sorted(_rng(seed, salt, targets[label]).sample(cases, max_cases), key=_case_key)
        packs.append(CasePack(target=targets[label], cases=tuple(cases)))
    return packs
