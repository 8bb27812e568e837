"""The scored truth is what the harness measures: calibration over many seeded holdout evaluations.

Each evaluation is a small holdout (12 videos, 36 questions) of a fresh world seed: the harness's
own agent loop answers every question once with the initial bundle and with the oracle's best
(:mod:`harness_support`: the real ``Agent``, request bodies, role dispatch and ``normalize_answer``;
only the socket and the video decoding are skipped), and the eval's own statistics
(``clustered_accuracy``, ``clustered_paired``) give each arm's 95 % interval by video and the
paired gain's. The question bank asks eight questions about two videos with the same text and
options (as the synthetic benchmark's templates do), and the evaluations cycle through three
agent paths (every tool with six turns; every tool with three turns, so long plans run out; no
vision). Over all of them the scored truth must sit inside the intervals about 95 % of the time,
and measured minus truth must average zero within its standard error, while the intended-letter
accuracy (the oracle's old number) must miss by many standard errors: the test can tell them apart.
"""

from __future__ import annotations

import math
import random
import statistics

from harness_support import run_pool

from skillharness.agent import AgentConfig
from skillharness.data.questions import Question
from skillharness.infer import clustered_accuracy, clustered_paired
from skillharness.sim import decisive_world
from skillharness.sim.model import SimModel
from skillharness.sim.world import AgentPath
from skillharness.skills import initial_bundle

EVALUATIONS = 200
VIDEOS_PER_EVAL = 12
TASK_TYPES = (
    "Action Reasoning",
    "Action Recognition",
    "Attribute Perception",
    "Counting Problem",
    "Information Synopsis",
    "OCR Problems",
    "Object Reasoning",
    "Object Recognition",
    "Spatial Perception",
    "Spatial Reasoning",
    "Temporal Perception",
    "Temporal Reasoning",
)
# (agent config overrides, the AgentPath the oracle is asked about): cycled over the evaluations.
PATHS = (
    ({}, AgentPath()),
    ({"max_steps": 3}, AgentPath(max_steps=3)),
    ({"vision": False}, AgentPath(frames=False)),
)


def _bank(videos: int = 48, repeated: int = 8) -> list[Question]:
    """Three questions per video; the last ``repeated`` videos ask one question, text and options
    alike, of an earlier video (mostly with another right answer), as a templated benchmark does."""
    questions = []
    for v in range(videos):
        for k in range(3):
            task = TASK_TYPES[(3 * v + k) % len(TASK_TYPES)]
            text = f"In scene {v}, which item does the {task.lower()} check point to, part {k}?"
            options = tuple(f"{x}. item {x.lower()}{v}{k}" for x in "ABCD")
            answer = "ABCD"[(v + k) % 4]
            if v >= videos - repeated and k == 0:
                source = questions[3 * (v - videos + repeated) + 1]
                text, options, task = source.question, source.options, source.task_type
                answer = "ABCD"[("ABCD".index(source.answer) + (v % 3)) % 4]
            questions.append(
                Question(
                    video_id=f"{v:03d}",
                    duration=("short", "medium", "long")[v % 3],
                    videoID=f"cal{v:03d}",
                    question_id=f"{v:03d}-{k + 1}",
                    task_type=task,
                    question=text,
                    options=options,
                    answer=answer,
                )
            )
    return questions


def _evaluate(bank: list[Question], index: int) -> dict[str, tuple[float, float, float, float, float]]:
    """Per arm and for the gain: (measured, low, high, scored truth, intended-letter truth)."""
    overrides, path = PATHS[index % len(PATHS)]
    rng = random.Random(f"calibration-{index}")
    videos = set(rng.sample(sorted({q.video_id for q in bank}), VIDEOS_PER_EVAL))
    pool = [q for q in bank if q.video_id in videos]
    model = SimModel(decisive_world(1000 + index), bank)
    config = AgentConfig(sampling={"temperature": 0.7}, seed_salt=f"cal{index}", **overrides)
    start = initial_bundle()
    arms = {"baseline": start, "final": model.oracle.best_bundle(start).to_bundle()}
    ids = [q.question_id for q in pool]
    clusters = [q.video_id for q in pool]
    correct, out = {}, {}
    for arm, bundle in arms.items():
        by_id = {p.question_id: p for p in run_pool(model, bundle, pool, config, f"cal{index}.{arm}")}
        correct[arm] = [float(by_id[i].correct is True) for i in ids]
        interval = clustered_accuracy(correct[arm], clusters, binary=True)
        assert interval is not None
        truth = model.oracle.expected_accuracy(bundle, ids, path)
        intended = model.oracle.intended_accuracy(bundle, ids) * model.world.letter_kept_share()
        out[arm] = (interval.value, interval.low, interval.high, truth, intended)
    gain = clustered_paired(correct["final"], correct["baseline"], clusters, binary=True)
    assert gain is not None
    out["gain"] = (
        gain.value,
        gain.low,
        gain.high,
        out["final"][3] - out["baseline"][3],
        out["final"][4] - out["baseline"][4],
    )
    return out


def _mean_and_se(values: list[float]) -> tuple[float, float]:
    return statistics.fmean(values), statistics.stdev(values) / math.sqrt(len(values))


def test_scored_truth_is_calibrated_against_the_harness_measurements() -> None:
    bank = _bank()
    results = [_evaluate(bank, i) for i in range(EVALUATIONS)]
    arms = [r[arm] for r in results for arm in ("baseline", "final")]
    inside = sum(low <= truth <= high for _, low, high, truth, _ in arms) / len(arms)
    bias, se = _mean_and_se([measured - truth for measured, _, _, truth, _ in arms])
    old_bias, old_se = _mean_and_se([measured - intended for measured, _, _, _, intended in arms])
    gains = [r["gain"] for r in results]
    gain_inside = sum(low <= truth <= high for _, low, high, truth, _ in gains) / len(gains)
    gain_bias, gain_se = _mean_and_se([measured - truth for measured, _, _, truth, _ in gains])
    report = (
        f"arms: {inside:.1%} inside, bias {bias:+.4f} ± {se:.4f} (intended-letter truth: "
        f"{old_bias:+.4f} ± {old_se:.4f}); gain: {gain_inside:.1%} inside, "
        f"bias {gain_bias:+.4f} ± {gain_se:.4f}"
    )
    assert 0.93 <= inside <= 0.97, report
    assert abs(bias) <= se, report
    assert abs(gain_bias) <= 2 * gain_se, report
    assert gain_inside >= 0.93, report
    # The old truth (the intended letter, kept by its shape) sits well above what is measured.
    assert old_bias < -4 * old_se, report
