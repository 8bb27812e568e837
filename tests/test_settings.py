"""The run fingerprint: every setting classified, per run kind, with paths counted by content."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from skillharness.config import Config, load_config
from skillharness.settings import CLASSIFICATION, PATH_CONTENT, Scope, config_leaves
from skillharness.skills import initial_bundle
from skillharness.store import RunKind, content_hash

EXPERIMENT = """\
data:
  questions: data/questions.json
  pools: data/pools.json
  videos_dir: data/videos
  subtitles_dir: data/subtitles
agent:
  bundle: bundle
train:
  prompts_dir: prompts
store:
  url: sqlite:///runs/runs.sqlite
"""


def experiment(root: Path) -> Path:
    """A small experiment folder whose config names everything by relative path."""
    (root / "data/videos").mkdir(parents=True)
    (root / "data/subtitles").mkdir()
    (root / "prompts").mkdir()
    (root / "data/questions.json").write_text('[{"question_id": "q1"}]')
    (root / "data/pools.json").write_text('{"val": ["q1"]}')
    (root / "data/videos/v1.mp4").write_bytes(b"\0" * 64)
    (root / "data/subtitles/v1.srt").write_text("1\n00:00:00,000 --> 00:00:01,000\nhello\n")
    (root / "prompts/judge.j2").write_text("judge {{ question }}")
    initial_bundle().save(root / "bundle")
    (root / "experiment.yaml").write_text(EXPERIMENT)
    return root / "experiment.yaml"


def test_every_config_setting_is_classified_and_every_classification_names_a_setting() -> None:
    leaves = set(config_leaves(Config))
    assert "llm.endpoints.*.base_url" in leaves, "the walk descends into lists of models"
    assert "train.roles.*.model" in leaves, "the walk descends into mappings of models"
    unclassified = sorted(leaves - set(CLASSIFICATION))
    assert not unclassified, f"classify these in skillharness.settings.CLASSIFICATION: {unclassified}"
    stale = sorted(set(CLASSIFICATION) - leaves)
    assert not stale, f"CLASSIFICATION names settings Config no longer has: {stale}"
    assert set(PATH_CONTENT) <= leaves
    path_fields = {
        leaf for leaf in leaves if leaf.endswith(("_dir", "questions", "pools", "bundle", "workspace"))
    }
    assert path_fields <= set(PATH_CONTENT), "a path setting must say how its target is counted"


def test_infer_runs_ignore_train_and_eval_settings_while_train_runs_count_train_settings(
    tmp_path: Path,
) -> None:
    base = load_config(experiment(tmp_path))
    for key, value in {
        "train.epochs": 9,
        "train.gate.alpha": 0.01,
        "train.roles": {"judge": {"model": "judge-model"}},
        "agent.trace_chars": 500,
    }.items():
        changed = load_config(tmp_path / "experiment.yaml", {key: value})
        assert changed.fingerprint() == base.fingerprint() == base.fingerprint(RunKind.EVAL), key
        assert changed.fingerprint(RunKind.TRAIN) != base.fingerprint(RunKind.TRAIN), key
    for key, value in {
        "eval.run_holdout_eval": True,
        "eval.confidence": 0.9,
        "train.budget.max_calls": 5,
    }.items():
        changed = load_config(tmp_path / "experiment.yaml", {key: value})
        for kind in RunKind:
            assert changed.fingerprint(kind) == base.fingerprint(kind), (key, kind)
    for key, value in {
        "agent.samples": 3,
        "agent.max_steps": 2,
        "agent.vision": False,
        "llm.model": "m2",
    }.items():
        changed = load_config(tmp_path / "experiment.yaml", {key: value})
        for kind in RunKind:
            assert changed.fingerprint(kind) != base.fingerprint(kind), (key, kind)


def test_the_fingerprint_is_the_hash_of_the_settings_which_hold_only_counted_keys(tmp_path: Path) -> None:
    config = load_config(experiment(tmp_path))
    infer, train = config.settings(), config.settings("train")
    assert config.fingerprint() == content_hash(infer)
    assert set(infer) < set(train)
    assert not [key for key in infer if key.split(".")[0] in ("train", "eval", "store")]
    assert "agent.concurrency" not in train
    assert "llm.endpoints.0.max_in_flight" not in train
    assert train["train.prompts_dir"].startswith("folder:")
    assert infer["agent.bundle"] == f"bundle:{initial_bundle().bundle_hash}"


def test_moving_the_experiment_folder_keeps_the_fingerprint(tmp_path: Path) -> None:
    first = load_config(experiment(tmp_path / "here"))
    shutil.copytree(tmp_path / "here", tmp_path / "moved" / "elsewhere")
    moved = load_config(tmp_path / "moved/elsewhere/experiment.yaml")
    assert moved.data.questions != first.data.questions, "the paths really differ"
    for kind in (RunKind.INFER, RunKind.TRAIN):
        assert moved.settings(kind) == first.settings(kind)
        assert not [v for v in moved.settings(kind).values() if str(tmp_path) in str(v)], "no path leaks in"


@pytest.mark.parametrize(
    ("relative", "key"),
    [
        ("data/questions.json", "data.questions"),
        ("data/pools.json", "data.pools"),
        ("data/subtitles/v1.srt", "data.subtitles_dir"),
        ("data/videos/v1.mp4", "data.videos_dir"),
        ("bundle/system.md", "agent.bundle"),
    ],
)
def test_editing_a_file_a_path_points_to_changes_the_fingerprint(
    tmp_path: Path, relative: str, key: str
) -> None:
    path = experiment(tmp_path)
    before = load_config(path).settings()
    with (tmp_path / relative).open("a") as handle:
        handle.write("\nedited\n")
    after = load_config(path).settings()
    assert [k for k in before if before[k] != after[k]] == [key]


def test_prompt_templates_count_for_train_runs_only(tmp_path: Path) -> None:
    path = experiment(tmp_path)
    config = load_config(path)
    before = {kind: config.fingerprint(kind) for kind in (RunKind.INFER, RunKind.TRAIN)}
    (tmp_path / "prompts/judge.j2").write_text("judge differently {{ question }}")
    assert config.fingerprint() == before[RunKind.INFER]
    assert config.fingerprint(RunKind.TRAIN) != before[RunKind.TRAIN], "the content counts, read at call time"


def test_scopes_are_the_three_documented_ones() -> None:
    assert {scope.value for scope in Scope} == {"answer", "train", "operational"}
    documented = (Path(__file__).resolve().parents[1] / "docs/config.md").read_text()
    for leaf, scope in CLASSIFICATION.items():
        if scope is Scope.OPERATIONAL:
            assert f"`{leaf}`" in documented, f"docs/config.md must list the operational setting {leaf}"


def test_issue_32_1_adding_or_removing_a_replica_keeps_the_fingerprint(tmp_path: Path) -> None:
    path = experiment(tmp_path)
    one = [{"base_url": "http://10.0.0.1:8000/v1"}]
    two = [*one, {"base_url": "http://10.0.0.2:8000/v1", "weight": 2, "name": "gpu-b"}]
    configs = [load_config(path, {"llm.endpoints": endpoints}) for endpoints in (one, two)]
    for kind in RunKind:
        assert configs[0].fingerprint(kind) == configs[1].fingerprint(kind), kind
    assert configs[1].settings()["llm.endpoints.*.send_sample_idx"] == [True]
    assert not [key for key in configs[1].settings() if key.startswith("llm.endpoints.0")]
    # A replica that reads requests differently still counts, as does another model.
    odd = load_config(
        path, {"llm.endpoints": [*one, {"base_url": "http://x:1/v1", "send_sample_idx": False}]}
    )
    other_model = load_config(path, {"llm.endpoints": two, "llm.model": "other-vl"})
    assert odd.settings()["llm.endpoints.*.send_sample_idx"] == [False, True]
    assert odd.fingerprint() != configs[0].fingerprint()
    assert other_model.fingerprint() != configs[1].fingerprint()
