"""Statistics by video (issue: the loop's decisions and numbers hold, item 5).

Video-MME asks three questions per video and their outcomes are correlated. The clustered
interval and test must reduce to the per-question ones when no video holds two questions, and,
in a simulated world with a strong per-video correlation, hold their level where the per-question
interval does not.
"""

from __future__ import annotations

import numpy as np
import pytest

from skillharness.data.questions import Question
from skillharness.infer import (
    bootstrap_mean_interval,
    cluster_bootstrap_interval,
    cluster_sign_flip_test,
    clustered_accuracy,
    clustered_paired,
    design_effect,
    mcnemar_exact,
)
from skillharness.sim.config import SimConfig, WorldConfig
from skillharness.sim.draw import uniform
from skillharness.sim.world import World


def test_item5_sign_flip_test_on_single_question_videos_is_exact_mcnemar() -> None:
    rng = np.random.default_rng(3)
    for n in (5, 12, 40):
        diffs = rng.choice([-1.0, 0.0, 1.0], size=n)
        wins, losses = int((diffs > 0).sum()), int((diffs < 0).sum())
        p = cluster_sign_flip_test(diffs, range(n), resamples=50_000)
        exact = mcnemar_exact(wins, losses)
        # exact enumeration up to 16 discordant videos, Monte Carlo beyond
        assert p == pytest.approx(exact, abs=1e-12 if wins + losses <= 16 else 0.01)


def test_item5_sign_flip_test_counts_videos_not_questions() -> None:
    # 12 videos, each with 3 questions that all moved the same way: 10 up, 2 down.
    diffs = [1.0] * 30 + [-1.0] * 6
    videos = [i // 3 for i in range(36)]
    assert cluster_sign_flip_test(diffs, videos) == pytest.approx(mcnemar_exact(10, 2))
    assert mcnemar_exact(30, 6) < cluster_sign_flip_test(diffs, videos) / 10


def test_item5_cluster_bootstrap_of_single_question_videos_is_the_question_bootstrap() -> None:
    values = np.random.default_rng(1).random(50)
    assert cluster_bootstrap_interval(values, range(50)) == bootstrap_mean_interval(values)


def test_item5_design_effect_is_one_without_shared_videos_and_about_m_when_videos_agree() -> None:
    values = np.random.default_rng(2).integers(0, 2, 60).astype(float)
    assert design_effect(values, range(60)) == pytest.approx(1.0)
    agreeing = np.repeat(values[:20], 3)  # three identical outcomes per video
    assert design_effect(agreeing, [i // 3 for i in range(60)]) == pytest.approx(3.0, rel=0.1)


def test_item5_clustered_interval_keeps_the_per_question_one_beside_it_and_is_never_narrower() -> None:
    outcomes = [1.0, 1.0, 1.0, 0.0, 0.0, 0.0] * 5
    videos = [i // 3 for i in range(30)]
    single = clustered_accuracy(outcomes, range(30), binary=True)
    by_video = clustered_accuracy(outcomes, videos, binary=True)
    assert single is not None
    assert by_video is not None
    assert (single.method, single.low, single.high) == (
        "wilson",
        single.per_question_low,
        single.per_question_high,
    )
    assert by_video.method == "cluster_bootstrap"
    assert (by_video.per_question_low, by_video.per_question_high) == (single.low, single.high)
    assert by_video.high - by_video.low > single.high - single.low
    assert by_video.design_effect == pytest.approx(3.0, rel=0.1)
    # six videos better in all three questions, one worse, three tied
    first, second = [1.0] * 18 + [0.0] * 3 + [1.0] * 9, [0.0] * 18 + [1.0] * 3 + [1.0] * 9
    paired = clustered_paired(first, second, videos, binary=True)
    assert paired is not None
    assert paired.per_question_method == "newcombe"
    assert (paired.wins, paired.losses) == (18, 3)
    assert paired.p_per_question == mcnemar_exact(18, 3)
    assert paired.p_value == pytest.approx(mcnemar_exact(6, 1))  # 6 videos against 1, not 18 against 3
    assert paired.low < paired.per_question_low


def _world(rho: float) -> tuple[World, list[Question]]:
    questions = [
        Question(
            question_id=f"v{v:03d}-{k}",
            video_id=f"v{v:03d}",
            videoID=f"v{v:03d}",
            duration="short",
            domain="d",
            sub_category="s",
            task_type="Counting Problem",
            question="How many?",
            options=("A. 1", "B. 2", "C. 3", "D. 4"),
            answer="A",
        )
        for v in range(80)
        for k in range(3)
    ]
    return World(SimConfig(seed=11, world=WorldConfig(video_correlation=rho)), questions), questions


def _outcomes(world: World, questions: list[Question], p: np.ndarray, arm: str, sample: int) -> np.ndarray:
    seed = world.config.seed
    draws = [world.correct_draw(q, uniform(seed, arm, q.question_id, sample), arm, sample) for q in questions]
    return (np.asarray(draws) < p).astype(float)


def test_item5_video_correlation_keeps_each_questions_accuracy_and_is_off_by_default() -> None:
    world, questions = _world(0.0)
    assert all(
        world.correct_draw(q, u, 0) == u for q, u in zip(questions, np.linspace(0, 1, 240), strict=True)
    )
    world, questions = _world(0.8)
    q1, q2, other = questions[0], questions[1], questions[3]
    u = np.array(
        [
            [world.correct_draw(q, uniform("own", q.question_id, s), s) for q in (q1, q2, other)]
            for s in range(4000)
        ]
    )
    assert u.mean(axis=0) == pytest.approx([0.5, 0.5, 0.5], abs=0.02)  # still uniform: accuracy kept
    assert np.corrcoef(u[:, 0], u[:, 1])[0, 1] > 0.6  # one video's questions move together
    assert abs(np.corrcoef(u[:, 0], u[:, 2])[0, 1]) < 0.06  # another video's do not


@pytest.mark.slow
def test_item5_per_question_interval_under_covers_and_the_clustered_one_holds_its_level() -> None:
    """Outcomes drawn from the world's true probabilities, 200 times: accuracy and paired gain."""
    world, questions = _world(0.8)
    rng = np.random.default_rng(5)
    base = rng.uniform(0.3, 0.6, len(questions))
    final = np.clip(base + rng.uniform(0.0, 0.25, len(questions)), 0, 1)
    videos = [q.video_id for q in questions]
    covered = {"accuracy": [0, 0], "gain": [0, 0]}
    repetitions = 200
    for sample in range(repetitions):
        # each bundle's episodes are its own: the arms' video latents are drawn apart
        yb = _outcomes(world, questions, base, "baseline", sample)
        yf = _outcomes(world, questions, final, "final", sample)
        acc = clustered_accuracy(yb, videos, binary=True)
        gain = clustered_paired(yf, yb, videos, binary=True)
        assert acc is not None
        assert gain is not None
        for name, est, truth in (("accuracy", acc, base.mean()), ("gain", gain, (final - base).mean())):
            covered[name][0] += est.per_question_low <= truth <= est.per_question_high
            covered[name][1] += est.low <= truth <= est.high
    for name, (per_question, by_video) in covered.items():
        assert per_question / repetitions < 0.90, (name, per_question, by_video)
        assert 0.92 <= by_video / repetitions <= 0.99, (name, per_question, by_video)
