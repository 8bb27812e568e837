"""Questions, loaders, the synthetic benchmark and the frozen split."""

from skillharness.data.adapter import Adapter, builtin_adapters, load_adapter
from skillharness.data.config import DEFAULT_BENCHMARK, DataConfig
from skillharness.data.convert import DEFAULT_DURATION, LoadedBenchmark, load_benchmark
from skillharness.data.loader import load_questions
from skillharness.data.metric_rules import METRIC_RULES, Part, RuleInput, ScoredGroup, scored_groups
from skillharness.data.pools import (
    MANIFEST_FILE,
    POOLS_FILE,
    FrozenPools,
    existing_artifacts,
    load_pools,
    pools_bytes,
    source_drift,
    source_sha256,
    verify_split,
    write_split,
)
from skillharness.data.questions import OPTION_LETTERS, VIDEO_MME, Benchmark, Question, TaskType, slugify
from skillharness.data.selection import load_pool_questions, read_questions, select_pool
from skillharness.data.split import Pool, Split, SplitParams, UnitKind, count_table, group_units, make_split
from skillharness.data.synth import (
    DEFAULT_SEED,
    DEFAULT_VIDEOS,
    ensure_synthetic_benchmark,
    generate_benchmark,
)
from skillharness.data.synth_layout import synthetic_questions

__all__ = [
    "DEFAULT_BENCHMARK",
    "DEFAULT_DURATION",
    "DEFAULT_SEED",
    "DEFAULT_VIDEOS",
    "MANIFEST_FILE",
    "METRIC_RULES",
    "OPTION_LETTERS",
    "POOLS_FILE",
    "VIDEO_MME",
    "Adapter",
    "Benchmark",
    "DataConfig",
    "FrozenPools",
    "LoadedBenchmark",
    "Part",
    "Pool",
    "Question",
    "RuleInput",
    "ScoredGroup",
    "Split",
    "SplitParams",
    "TaskType",
    "UnitKind",
    "builtin_adapters",
    "count_table",
    "ensure_synthetic_benchmark",
    "existing_artifacts",
    "generate_benchmark",
    "group_units",
    "load_adapter",
    "load_benchmark",
    "load_pool_questions",
    "load_pools",
    "load_questions",
    "make_split",
    "pools_bytes",
    "read_questions",
    "scored_groups",
    "select_pool",
    "slugify",
    "source_drift",
    "source_sha256",
    "synthetic_questions",
    "verify_split",
    "write_split",
]
