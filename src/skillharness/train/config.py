"""The ``train`` config section: the loop, its steps, the gate and the budget."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, model_validator

from skillharness.util.model import StrictModel


class GateConfig(StrictModel):
    """The e-process gate (see docs/gate.md): bets, threshold, ladder and budget."""

    alpha: float = Field(
        0.05, gt=0, lt=1, description="Type-I error of one gate (false accept of a no-better edit)."
    )
    bet_cap: float = Field(
        0.5,
        gt=0,
        le=0.5,
        description="Bets stay in [0, bet_cap], so a win multiplies wealth by at most 1 + bet_cap.",
    )
    n_max: int = Field(
        1024,
        ge=1,
        description="Largest number of paired observations (ties included) per gate: the cap on the "
        "size min_effect gives each test.",
    )
    min_effect: float | None = Field(
        0.15,
        gt=0,
        le=1,
        description="Smallest accuracy gain a test is sized to detect (about 3/4 power): its observations "
        "are 4 log(n_candidates / alpha) r / min_effect^2 for the class's measured discordance r, capped "
        "at n_max. None: every test gets n_max. Smaller tests give up sooner on what is not clearly "
        "better and leave calls for more proposals (docs/benchmarks.md, issue 48's sweep).",
    )
    futility_z: float | None = Field(
        1.0,
        gt=0,
        description="A test stops as reject_inertia at a stage end when even the effect futility_z "
        "standard errors above its estimate could not reach the threshold in the observations it has "
        "left. None: only the sure stop (all wins at the cap).",
    )
    max_open: int = Field(
        2,
        ge=1,
        description="Open candidates (tests kept across steps) per target; a target with this many open "
        "is not evolved until one closes. 2 holds a test and one merged set beside it; more open tests "
        "race to land overlapping lines, and the lines of no effect that land grow with them "
        "(docs/benchmarks.md, 'Open tests per target').",
    )
    merge_open: bool = Field(
        True,
        description="A target's new proposal is tested together with the edits of its strongest open "
        "test (wealth at least merge_min_wealth) when both apply as one patch set: two real insights "
        "double the effect, so the merged test needs about a quarter of the draws. False: every proposal "
        "is tested alone (fewer useless lines land beside real ones, and fewer real ones by 32,000 calls: "
        "docs/benchmarks.md).",
    )
    merge_min_wealth: float = Field(
        1.05,
        ge=1.0,
        description="The wealth an open test needs before a new proposal of its target is merged into it "
        "(merge_open). Above 1, only a test with some evidence for its candidate takes a partner, so a "
        "line no draw has backed does not land on the new proposal's strength (docs/benchmarks.md, "
        "issue 48: half the useless lines at 8,000 calls); 1 merges into any test not leaning against it.",
    )
    merge_max_parts: int = Field(
        0,
        ge=0,
        description="The most proposals one merged set may carry: an open test that already carries "
        "this many takes no further partner. 0: no limit.",
    )
    merge_sizing: Literal["per_part", "one"] = Field(
        "one",
        description="How a merged set's test is sized: per_part, for min_effect times the proposals it "
        "carries (the effect it claims), so a set whose added proposal does nothing gives up soon and "
        "its partner's own test lands the partner alone; one, for min_effect like any test. Sizing "
        "decides only when a test gives up, never its level.",
    )
    merge_credit: Literal["set", "each_part", "split"] = Field(
        "split",
        description="What a merged set's accept must also show before it lands. set: nothing more, "
        "its test passing. each_part: that its later proposal added something: the set lands only "
        "while its partner's test is open and measured more per draw than the partner alone (else it "
        "closes as reject_inertia and the partner's test goes on), and a set whose partner closes "
        "without landing reopens as its own proposal alone. split: as each_part, and a partner that "
        "closed as reject_inertia is tested again alone beside it. None changes a test's level.",
    )
    share_incumbent: bool = Field(
        False,
        description="Tests of one target against one incumbent draw one shared (question, sample) "
        "sequence, so the incumbent's side of it is asked once (the BaselineCache) and a further test "
        "pays for the candidate's side only; an accept starts the targets it changed on fresh samples. "
        "Each test keeps its level, but the tests then share the incumbent's luck: in SimLab more "
        "accepts at 8,000 calls on one setup and more harmful or useless lines on both "
        "(docs/benchmarks.md), so it is off.",
    )
    bet_strategy: Literal["agrapa", "ons"] = Field(
        "agrapa",
        description="Predictable bet rule: 'agrapa' (plug-in Kelly bet) or 'ons' (online Newton step).",
    )
    first_stage: int = Field(8, ge=1, description="Observations in the ladder's first stage.")
    stage_growth: float = Field(
        2.0,
        ge=1.0,
        description="A ladder stage ends at ceil(previous end x stage_growth) observations, capped at n_max.",
    )
    n_candidates: int = Field(
        1,
        ge=1,
        description="Candidates tested on the same val data; the accept threshold is n_candidates / alpha.",
    )
    alpha_spending: Literal["none", "basel", "geometric", "elond"] = Field(
        "none",
        description=(
            "The run's level rule over its tests k = 1, 2, ...: 'none' gives each test alpha (expected "
            "false accepts <= the sum of the levels); 'basel' gives alpha * 6 / (pi^2 k^2) and "
            "'geometric' alpha / 2^k (P(any false accept) <= alpha); 'elond' gives "
            "alpha * gamma_k * (accepts before test k + 1) (e-LOND: at most alpha of the run's "
            "accepts are false, in expectation)."
        ),
    )
    mcnemar_alpha: float = Field(
        0.05,
        gt=0,
        lt=1,
        description="Level of the one-sided McNemar harm guard on untargeted classes (Holm over classes).",
    )
    guard_draws: int | None = Field(
        None,
        ge=0,
        description=(
            "Paired draws per guarded class for the McNemar guard. None: sized from guard_harm, "
            "guard_power and guard_discordance (at most guard_max_draws); an integer fixes it (0: no guard)."
        ),
    )
    guard_harm: float = Field(
        0.2,
        gt=0,
        lt=1,
        description="Accuracy drop on one class the McNemar guard is sized to detect (0.2: 20 points).",
    )
    guard_power: float = Field(
        0.8, gt=0, lt=1, description="Probability with which the guard must flag a guard_harm drop."
    )
    guard_clear: float | None = Field(
        0.05,
        gt=0,
        lt=1,
        description=(
            "Stop drawing a guarded class once its draws make a guard_harm drop implausible: at most "
            "this chance of clearing a class that has that drop (Ville), added to the power the guard "
            "is sized for. None: every guarded class takes all its draws."
        ),
    )
    guard_discordance: float = Field(
        0.3,
        gt=0,
        le=1,
        description=(
            "Planning assumption of the guard's size (and `gate plan`'s default): the share of paired "
            "draws where exactly one side is right."
        ),
    )
    guard_max_draws: int = Field(
        256,
        ge=1,
        description=(
            "Most paired draws per guarded class when the guard is sized by power: its cost bound; "
            "`gate plan` shows the power left when it binds."
        ),
    )
    # 8: on 90 val questions (2-15 per class) it trains about half the classes, each claim resting on
    # at least 8 questions; 5 and naming every class measured no better (docs/benchmarks.md). On the
    # audit's 270 it leaves out the three micro classes, as 20 did.
    min_distinct: int = Field(
        8,
        ge=1,
        description="A class with fewer distinct val questions is micro: its accepts would be claims about "
        "too few questions, so training leaves it out unless train.task_types names it.",
    )
    rule: Literal["eprocess", "minibatch", "fixed_n"] = Field(
        "eprocess",
        description=(
            "Acceptance rule: 'eprocess' (the betting ladder above); 'minibatch' (accept when strictly "
            "better on minibatch_size draws) and 'fixed_n' (mean difference above 2 standard errors on "
            "n_max draws) exist only as baselines for benchmarks/train.py: neither bounds false accepts."
        ),
    )
    minibatch_size: int = Field(3, ge=1, description="Draws of the 'minibatch' rule.")
    reserve: float = Field(
        0.0,
        ge=0,
        le=0.5,
        description="Share of the val videos no gate or guard draws (the same videos in every tool): "
        "the end of training compares final with baseline on them as well, which gives the val gain's "
        "optimism. Their questions leave every class's distinct count, so a class may turn micro.",
    )

    @model_validator(mode="after")
    def _clearing_leaves_power(self) -> GateConfig:
        # The guard is sized for guard_power + guard_clear: the sum is a probability.
        if self.guard_clear is not None and self.guard_power + self.guard_clear >= 1:
            raise ValueError(
                f"guard_power ({self.guard_power}) + guard_clear ({self.guard_clear}) must be below 1"
            )
        return self


# The evolve role samples by default, so raising train.evolve.candidates gives distinct candidates
# (at temperature 0 a server answers one prompt alike). Every other role answers greedily, so one
# prompt has one answer and a resume asks nothing again.
DEFAULT_ROLE_TEMPERATURE: dict[str, float] = {"evolve": 0.7}


class RoleSettings(StrictModel):
    """Model and sampling of one non-agent role: an unset model is ``llm.model``; an unset sampling
    field is not sent (the agent's ``agent.sampling`` is not inherited)."""

    model: str | None = Field(None, description="Model name for this role (default: llm.model).")
    temperature: float | None = Field(
        None,
        ge=0,
        le=2,
        description=f"Sampling temperature (default {DEFAULT_ROLE_TEMPERATURE['evolve']:g} for evolve, whose "
        "train.evolve.candidates, when more than one, then differ; 0.0 for the others). evolve at "
        "0, or with a seed, asks one candidate.",
    )
    top_p: float | None = Field(None, gt=0, le=1)
    max_tokens: int | None = Field(None, ge=1)
    seed: int | None = None


class DiagnosisConfig(StrictModel):
    """The diagnosis waterfall (SPEC 4.3.2)."""

    max_excluded_share: float = Field(
        0.25,
        ge=0,
        le=1,
        description="A step fails loudly when infra, degraded and failed-judge cases pass this share "
        "(judged only from `min_excluded` excluded cases on).",
    )
    min_excluded: int = Field(
        5,
        ge=1,
        description="Fewest excluded cases on which the excluded share is judged: a share of a handful "
        "of wrong answers means nothing (2 of 5 is 40 %).",
    )
    judge_template: Literal["judge", "span_eval_user"] = Field(
        "judge", description="The C3 judge's template."
    )
    enabled: bool = Field(
        True,
        description=(
            "False (an ablation): no judge; every wrong answer that C1/C2 do not settle becomes a defect "
            "of its class's skill."
        ),
    )


class CasePackConfig(StrictModel):
    max_cases: int = Field(8, ge=1, description="Most cases in one case pack (chosen deterministically).")


class EvolveConfig(StrictModel):
    # The rank trial by default: one proposal per step, tested as proposed, until the run's own
    # tests show whether the rank role tells better proposals from worse; three ranked candidates
    # only once it has. Ranking from the start lost to one proposal with a ranker at chance; the
    # trial stays within a point of one proposal there and gains with a good ranker
    # (docs/benchmarks.md, "The rank trial as the default").
    candidates: int = Field(
        3,
        ge=1,
        description="Edit sets proposed per target and step when the evolve role samples "
        "(train.roles.evolve.temperature above 0, no seed); at temperature 0 one is asked (they would be "
        "identical). With rank auto, one until the rank trial trusts the rank role, and one for good if "
        "it does not.",
    )
    rejected_memory: int = Field(
        5, ge=0, description="Rejected edit sets per target shown to the next proposal."
    )
    show_under_test: bool = Field(
        True,
        description="Show the next proposal its target's edit sets whose tests are open, so it does not "
        "repeat them.",
    )
    rank: bool | Literal["auto"] = Field(
        "auto",
        description="Let evolve_rank choose among several valid candidates (else the first); it pays "
        "only when the rank role tells a useful edit from a useless one better than chance. auto: a rank "
        "trial measures that on the run's own tests first (one proposal each, tested as proposed, the rank "
        "role asked beside it), then ranks only if the rank role earned it (docs/train.md, 'The rank "
        "trial').",
    )
    rank_trial_tests: int = Field(
        24,
        ge=4,
        description="With rank auto: closed tests of trial proposals the trial is judged on, once.",
    )
    rank_trial_alpha: float = Field(
        0.05,
        gt=0,
        lt=1,
        description="With rank auto: the trial trusts the rank role when the proposals it endorsed did "
        "better on their tests than those it declined, one-sided Mann-Whitney p below this.",
    )
    # Off by default: a rank role that reads only the text declines real insights as often as it
    # spares a useless test; ranking without declining lost less at chance and gained as much with a
    # perfect ranker (docs/benchmarks.md, "Ranking without declining").
    rank_may_decline: bool = Field(
        False,
        description="With rank on, evolve_rank may answer that no candidate is worth a test (choice "
        "-1), and it is asked even about a single valid candidate: a step of generic advice then opens "
        "no test and is remembered as reject_invalid (rank_declined). False: the best one is always "
        "tested. The rank trial (rank auto) offers declining whatever this says: its evidence is the "
        "rank role's word on each proposal.",
    )
    max_edits: int = Field(8, ge=1, description="Most edits in one patch set.")
    max_body_chars: int = Field(8000, ge=1, description="Longest body an edit may produce.")
    max_system_chars: int = Field(
        6000, ge=1, description="System prompt budget: consolidate_system runs at epoch end when it is over."
    )


class MomentumConfig(StrictModel):
    # Off by default: in SimLab's honest world its tests, sized for an insight's effect, mostly end
    # in inertia on a restatement's, taking calls, and its restatements were a quarter of the lines
    # of no effect left once merged sets are split (docs/benchmarks.md, "Splitting without slow
    # momentum").
    enabled: bool = Field(False, description="Run slow momentum at each epoch end (SPEC 4.4).")
    gated: bool = Field(True, description="Gate momentum guidance like any edit (false: apply it directly).")
    max_chars: int = Field(1200, ge=1, description="Longest momentum guidance kept.")


class BudgetConfig(StrictModel):
    """Training stops cleanly (interrupted, resumable) when any limit is reached.

    Each limit is the run's, kept in the checkpoint across every ``--resume``: a resume spends
    only what the run has left (raise a limit to continue a run that reached it)."""

    max_calls: int | None = Field(
        None, ge=1, description="Model calls of all roles over the whole run (cache hits excluded)."
    )
    max_cost: float | None = Field(
        None, gt=0, description="Cost in the units of llm.prices, over the whole run."
    )
    max_wall_s: float | None = Field(
        None, gt=0, description="Wall-clock seconds over every invocation of the run."
    )


class TrainConfig(StrictModel):
    """Training: epochs of steps over the train pool; edits gated on val."""

    epochs: int = Field(3, ge=1)
    batch_size: int = Field(8, ge=1, description="Units per step.")
    early_stop_patience: int = Field(2, ge=1, description="Epochs (not steps) without improvement.")
    task_types: tuple[str, ...] | None = Field(None, description="Trained task types; default all non-micro.")
    skill_update_mode: str = Field("patch", pattern="^(patch|rewrite)$")
    prompts_dir: Path | None = Field(
        None,
        description=(
            "Folder of prompt templates used instead of the packaged ones; it must hold every template "
            "(copy the packaged folder and edit it; see docs/templates.md). None: the packaged templates."
        ),
    )
    seed: int = 0
    infra_retries: int = Field(
        2,
        ge=0,
        description="Times a training rollout (step, gate arm, guard, val score) asks a draw that failed on "
        "infrastructure again; an outage left after that stops the run resumably (docs/train.md).",
    )
    ema_gamma: float = Field(
        0.3, gt=0, le=1, description="Weight of the newest value in the per-class val EMA."
    )
    gate: GateConfig = Field(default_factory=GateConfig)
    diagnosis: DiagnosisConfig = Field(default_factory=DiagnosisConfig)
    casepack: CasePackConfig = Field(default_factory=CasePackConfig)
    evolve: EvolveConfig = Field(default_factory=EvolveConfig)
    momentum: MomentumConfig = Field(default_factory=MomentumConfig)
    budget: BudgetConfig = Field(default_factory=BudgetConfig)
    roles: dict[Literal["judge", "evolve", "rank", "momentum", "consolidate"], RoleSettings] = Field(
        default_factory=dict, description="Per-role model and sampling; unset roles use the agent's model."
    )
