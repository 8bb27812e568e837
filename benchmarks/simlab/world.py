"""What every SimLab run shares: the question sources, the simulator world, the oracle's truth and the
curve of test gap closure that an observer reads off the loop at each checkpoint."""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from skillharness.data.loader import load_questions
from skillharness.data.synth import ensure_synthetic_benchmark
from skillharness.sim import AgentPath, SimConfig, SimServer, decisive_world
from skillharness.sim.oracle import BundleText, Oracle
from skillharness.skills import Bundle, Workspace
from skillharness.train.state.checkpoint import Checkpoint
from skillharness.train.state.context import TrainContext
from skillharness.train.state.reserve import reserved_ids
from skillharness.train.validate.unselected import unselected_truth
from skillharness.util.atomic import atomic_write_text
from skillharness.util.canonical import content_hash

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "benchmarks.md"
BENCH_CACHE = Path.home() / ".cache" / "skillharness-bench" / "synth"
# Outside the repository, as for the tests (tests/conftest.py); the same variable moves it.
VIDEOMME = Path(
    os.environ.get(
        "SKILLHARNESS_VIDEOMME_QUESTIONS", ROOT.parent / "shared/data/videomme/videomme_questions.json"
    )
)
SYNTH = {"seed": 3, "videos": 36}
# The MVBench-like world: the synthetic generator written in MVBench's layout (adapters/mvbench.yaml):
# 20 task types dealt round-robin, five options, three questions per video; 1,334 videos give 4,002
# questions, 200 or 201 per task. The generator's seed is fixed: the world seed varies the split.
MVBENCH_LIKE = {"seed": 0, "videos": 1_334, "layout": "mvbench"}


def questions_path(text: str) -> Path:
    """A ``--videomme`` argument, made absolute: each run's config lives in its own folder, where a
    relative path would name another file."""
    return Path(text).resolve()


WORLDS = ("decisive", "realistic")


def sim_world(world: str, seed: int, settings: dict[str, Any] | None = None) -> SimConfig:
    """``decisive``: one +0.40..0.50 insight per class; ``realistic``: the simulator's default world,
    three insights per class worth about +0.1 each. ``settings`` (nested SimConfig keys, e.g.
    ``{"world": {"seed_coupling": 0.2}}``) are merged in and validated: an unknown key is refused."""
    base = decisive_world(seed) if world == "decisive" else SimConfig(seed=seed)
    if not settings:
        return base
    return SimConfig.model_validate(merge(base.model_dump(), settings))


def sim_fingerprint(config: SimConfig) -> str:
    """A short hash of every simulator setting but the seed: runs of one measurement share it, and
    a table measured under other knobs cannot pass for it."""
    return content_hash(config.model_dump(mode="json", exclude={"seed"}))[:12]


def dotted_settings(items: list[str], flag: str) -> dict[str, Any]:
    """``["world.seed_coupling=0.2", ...]`` as the nested settings they name (YAML values)."""
    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ValueError(f"{flag} {item!r}: expected KEY=VALUE, e.g. world.seed_coupling=0.2")
        *parents, leaf = key.split(".")
        node = out
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = yaml.safe_load(value)
    return out


@dataclass(frozen=True)
class Source:
    """Where a dataset's questions and media come from, and how the ablation rows split it."""

    questions: Path
    videos_dir: Path
    subtitles_dir: Path | None
    split: tuple[int, int, int]
    classes: int
    benchmark: str = "videomme"  # the adapter the questions are read through (data.benchmark)


def synth_source(_: Path, __: Path) -> Source:
    root = ensure_synthetic_benchmark(BENCH_CACHE, **SYNTH)
    return Source(root / "questions.json", root / "videos", root / "subtitles", (24, 48, 36), 3)


def videomme_source(folder: Path, path: Path) -> Source:
    """The real questions at ``path``; every video is the same placeholder file (see
    benchmarks/train.py)."""
    questions = load_questions(path)
    placeholder = next((ensure_synthetic_benchmark(BENCH_CACHE, **SYNTH) / "videos").glob("*.mp4"))
    videos = folder / "videomme-videos"
    videos.mkdir(parents=True, exist_ok=True)
    for video_id in {q.videoID for q in questions}:
        link = videos / f"{video_id}.mp4"
        if not link.exists():
            link.symlink_to(placeholder)
    return Source(path, videos, None, (240, 480, 600), 4)


def mvbench_like_source(
    _: Path, __: Path, *, videos: int = int(MVBENCH_LIKE["videos"]), cache: Path = BENCH_CACHE
) -> Source:
    """The synthetic benchmark in MVBench's layout (``MVBENCH_LIKE``; ``videos`` smaller for a test):
    real mp4 files, some questions inside a clip window of a longer file, read through the
    ``mvbench`` adapter as a run reads it. ``split`` and ``classes`` are the ablation rows' and
    unused by the efficiency setups."""
    root = ensure_synthetic_benchmark(
        cache, seed=int(MVBENCH_LIKE["seed"]), videos=videos, layout=str(MVBENCH_LIKE["layout"])
    )
    return Source(root / "questions", root / "videos", root / "subtitles", (200, 160, 1_000), 20, "mvbench")


@dataclass(frozen=True)
class Data:
    """The benchmark files, the trained classes and the question ids the truth is measured on."""

    source: Source
    pools: Path
    bundle: Path
    classes: tuple[str, ...]  # empty: the run's default (what preflight says)
    val: tuple[str, ...]
    test: tuple[str, ...]
    test_all: tuple[str, ...]  # every class of the test pool
    val_all: tuple[str, ...] = ()  # every class of the val pool: what the run's val gain speaks of


# SimLab's agent (write_config): text only, so no get_frames; get_subtitles and six turns as default.
SIMLAB_PATH = AgentPath(frames=False)


@dataclass
class Truth:
    """The oracle's view of one world.

    ``accuracy`` is the scored truth on SimLab's agent path (what a measured accuracy estimates:
    edits' true effects, true gains). Gap closure is read on the intended-letter accuracy
    (``intended``), what the insights are worth whatever the answer's shape: ``initial`` and
    ``best`` hold it on val and test, ``best`` being each pool's own oracle-best bundle
    (``Oracle.best_bundle`` over that pool's questions), so neither pool's closure rests on the
    other's questions.
    """

    oracle: Oracle
    data: Data
    path: AgentPath = SIMLAB_PATH
    initial: dict[str, float] = field(default_factory=dict)
    best: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        start = Bundle.load(self.data.bundle)
        for pool in ("val", "test"):
            # Each pool's own best: with side effects (world.side_effect_share) an insight may lower
            # a pool's questions more than it raises them, and that pool's best leaves it out.
            best = self.oracle.best_bundle(BundleText.from_bundle(start), self._ids(pool))
            self.initial[pool] = self.intended(start, pool)
            self.best[pool] = self.intended(best, pool)

    def _ids(self, pool: str) -> tuple[str, ...]:
        return self.data.val if pool == "val" else self.data.test

    def accuracy(self, bundle: Bundle | BundleText, pool: str) -> float:
        """The scored truth of ``bundle`` on ``pool``'s trained classes."""
        return self.oracle.expected_accuracy(bundle, self._ids(pool), self.path)

    def intended(self, bundle: Bundle | BundleText, pool: str) -> float:
        """The intended-letter accuracy of ``bundle`` on ``pool``'s trained classes."""
        return self.oracle.intended_accuracy(bundle, self._ids(pool))

    def gain(self, bundle: Bundle, pool: str) -> float:
        """Intended-letter accuracy ``bundle`` gains over the initial bundle on ``pool`` (trained classes)."""
        return self.intended(bundle, pool) - self.initial[pool]

    def reserve_gain(self, bundle: Bundle, share: float) -> float | None:
        """What the run's unselected estimate estimates with ``train.gate.reserve`` = ``share``: the
        gain on the reserve's questions of each trained class, weighted as the estimate weighs it."""
        val = [self.oracle.world.question(i) for i in (self.data.val_all or self.data.val)]
        held = reserved_ids(val, share)
        trained = [q for q in val if q.question_id in set(self.data.val)]
        covered = {
            c: {
                "size": n,
                "undrawn": [q.question_id for q in trained if q.task_type == c and q.question_id in held],
            }
            for c, n in Counter(q.task_type for q in trained).items()
        }
        start = Bundle.load(self.data.bundle)
        return unselected_truth(
            {"available": True, "covered": {c: v for c, v in covered.items() if v["undrawn"]}},
            lambda ids: (
                self.oracle.intended_accuracy(bundle, ids) - self.oracle.intended_accuracy(start, ids)
            ),
        )

    def closure(self, bundle: Bundle, pool: str) -> float:
        """Share of the initial-to-best gap closed, on the intended-letter accuracy."""
        gap = self.best[pool] - self.initial[pool]
        return (self.intended(bundle, pool) - self.initial[pool]) / gap if gap > 0 else 0.0


@dataclass(frozen=True)
class Point:
    """The incumbent at one checkpoint, with the calls spent to reach it."""

    calls: int
    version: str
    closure_test: float
    closure_val: float
    alpha_spent: float
    gates: int


class CurveObserver:
    """Gap closure of the incumbent against a call count, at each checkpoint (after each step and
    decision, and at epoch end). ``count`` reads the calls from the run's context."""

    def __init__(self, truth: Truth, workspace: Path, count: Callable[[TrainContext], int]) -> None:
        self.truth = truth
        self.workspace = workspace
        self.count = count
        self.points: list[Point] = []
        self.ctx: TrainContext | None = None
        self._closure: dict[str, tuple[float, float]] = {}
        self.trial_decided_at: int | None = None  # calls when the rank trial was judged (rank auto)
        # Each trial test as it closed: calls, the rank role's word, its effect estimate; so other
        # trial rules can be read off one run (until a verdict the trial's design is the greedy one).
        self.trial_closes: list[tuple[int, str, float]] = []
        self._trial_seen = {"endorsed": 0, "declined": 0}  # how much of each group is recorded

    def on_start(self, ctx: TrainContext) -> None:
        self.ctx = ctx

    def on_step(self, ckpt: Checkpoint, steps_in_epoch: int) -> None:
        self._record(ckpt)

    def on_checkpoint(self, ckpt: Checkpoint) -> None:
        self._record(ckpt)

    def _record(self, ckpt: Checkpoint) -> None:
        if self.ctx is None:
            return
        if ckpt.version not in self._closure:
            bundle = Workspace.open(self.workspace, verify=False).load(ckpt.version)
            self._closure[ckpt.version] = (
                self.truth.closure(bundle, "test"),
                self.truth.closure(bundle, "val"),
            )
        test, val = self._closure[ckpt.version]
        trial = ckpt.rank_trial
        calls = self.count(self.ctx)
        if self.trial_decided_at is None and trial.verdict != "open":
            self.trial_decided_at = calls
        for word, effects in (("endorsed", trial.endorsed), ("declined", trial.declined)):
            self.trial_closes += [(calls, word, e) for e in effects[self._trial_seen[word] :]]
            self._trial_seen[word] = len(effects)
        self.points.append(Point(calls, ckpt.version, test, val, ckpt.alpha_spent, ckpt.gates_run))

    def calls_to(self, share: float) -> int | None:
        return next((p.calls for p in self.points if p.closure_test >= share), None)


def merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    """``extra`` merged into ``base`` key by key (nested dicts merged, other values replaced)."""
    out = dict(base)
    for key, value in extra.items():
        out[key] = merge(out.get(key, {}), value) if isinstance(value, dict) else value
    return out


def write_config(
    folder: Path, data: Data, sim: SimServer, train: dict[str, Any], *, agent: dict[str, Any] | None = None
) -> Path:
    """The experiment file of one run: text-only agent at temperature 0.7 (``agent`` merged in),
    ``train`` as given."""
    doc = {
        "data": {
            "questions": str(data.source.questions),
            "pools": str(data.pools),
            "videos_dir": str(data.source.videos_dir),
            "subtitles_dir": None if data.source.subtitles_dir is None else str(data.source.subtitles_dir),
            "benchmark": data.source.benchmark,
        },
        "llm": {"model": sim.model_name, "endpoints": [{"base_url": sim.base_url}]},
        "cache": {"url": f"sqlite:///{folder / 'cache.sqlite'}"},
        "store": {"url": f"sqlite:///{folder / 'runs.sqlite'}"},
        "agent": merge(
            {
                "bundle": str(data.bundle),
                "concurrency": 8,
                "vision": False,
                "sampling": {"temperature": 0.7},
                "frames": {"cache_dir": str(folder / "frames")},
            },
            agent or {},
        ),
        "eval": {"run_holdout_eval": False},
        "train": train,
    }
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "experiment.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def write_section(title: str, text: str) -> None:
    """Replace the ``### title`` section of docs/benchmarks.md with ``text`` (or append it)."""
    old = DOC.read_text() if DOC.exists() else "# Benchmarks\n"
    pattern = re.compile(rf"^### {re.escape(title)}\n.*?(?=^##+ |\Z)", re.S | re.M)
    new = pattern.sub(lambda _: text + "\n", old) if pattern.search(old) else old.rstrip("\n") + "\n\n" + text
    atomic_write_text(DOC, new)
