"""The config: unknown keys anywhere are errors naming key, path and origin; flags win only when given."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillharness.config import load_config, path_settings
from skillharness.errors import ConfigError
from skillharness.settings import PATH_CONTENT


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "experiment.yaml"
    path.write_text(text)
    return path


def test_unknown_top_level_key_names_key_and_file(tmp_path: Path) -> None:
    path = write(tmp_path, "trian:\n  epochs: 3\n")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert "unknown key 'trian' at trian" in str(info.value)
    assert str(path) in str(info.value)


def test_refuted_config_rejects_unknown_keys_at_any_depth(tmp_path: Path) -> None:
    path = write(
        tmp_path, "llm:\n  endpoints:\n    - base_url: http://127.0.0.1:9/v1\n      api_key: sk-oops\n"
    )
    with pytest.raises(ConfigError) as info:
        load_config(path)
    message = str(info.value)
    assert "unknown key 'api_key' at llm.endpoints.0.api_key" in message
    assert str(path) in message
    assert "at least 1 item" not in message, "only the real cause is reported"


def test_deeply_nested_unknown_key(tmp_path: Path) -> None:
    path = write(tmp_path, "train:\n  gate:\n    alpah: 0.1\n")
    with pytest.raises(ConfigError, match=r"unknown key 'alpah' at train\.gate\.alpah"):
        load_config(path)


def test_unknown_key_from_environment_names_the_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SKILLHARNESS_AGENT__CONCURRENCYY", "3")
    with pytest.raises(ConfigError, match=r"SKILLHARNESS_AGENT__CONCURRENCYY"):
        load_config(write(tmp_path, "agent:\n  concurrency: 4\n"))
    monkeypatch.delenv("SKILLHARNESS_AGENT__CONCURRENCYY")
    monkeypatch.setenv("SKILLHARNESS_AGNET__X", "3")
    with pytest.raises(ConfigError, match="unknown config section 'agnet'"):
        load_config()


def test_wrong_type_names_path_and_origin(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"agent\.max_steps: .*in .*experiment\.yaml"):
        load_config(write(tmp_path, "agent:\n  max_steps: many\n"))


def test_refuted_cli_flag_overrides_yaml_only_when_given(tmp_path: Path) -> None:
    path = write(tmp_path, "agent:\n  concurrency: 4\n  vision: false\n")
    not_given = load_config(path, {"agent.concurrency": None, "agent.vision": None})
    assert not_given.agent.concurrency == 4
    assert not_given.agent.vision is False
    given = load_config(path, {"agent.concurrency": 9, "agent.vision": True})
    assert given.agent.concurrency == 9
    assert given.agent.vision is True
    # A flag given with the default's value still wins over the file.
    assert load_config(path, {"agent.concurrency": 24}).agent.concurrency == 24


def test_precedence_flag_over_env_over_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path, "agent:\n  concurrency: 4\n  max_steps: 3\n")
    monkeypatch.setenv("SKILLHARNESS_AGENT__CONCURRENCY", "7")
    config = load_config(path)
    assert config.agent.concurrency == 7
    assert config.agent.max_steps == 3
    assert load_config(path, {"agent.concurrency": 11}).agent.concurrency == 11


def test_secrets_never_enter_the_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_ENDPOINT_KEY", "sk-very-secret-value")
    path = write(
        tmp_path,
        "llm:\n  endpoints:\n    - base_url: http://127.0.0.1:9/v1\n      api_key_env: MY_ENDPOINT_KEY\n",
    )
    config = load_config(path)
    dumped = json.dumps(config.model_dump(mode="json"))
    assert "MY_ENDPOINT_KEY" in dumped
    assert "sk-very-secret-value" not in dumped
    assert config.fingerprint() == load_config(path).fingerprint()


def test_relative_paths_resolve_against_the_config_file(tmp_path: Path) -> None:
    text = (
        "data:\n  questions: data/q.json\nagent:\n  bundle: ../bundle\n"
        "store:\n  url: sqlite:///runs/runs.sqlite\ncache:\n  url: sqlite:////abs/cache.sqlite\n"
    )
    config = load_config(write(tmp_path, text))
    assert config.data.questions == (tmp_path / "data/q.json").resolve()
    assert config.agent.bundle == (tmp_path.parent / "bundle").resolve()
    assert config.store.url == f"sqlite:///{(tmp_path / 'runs/runs.sqlite').resolve()}"
    assert config.cache.url == "sqlite:////abs/cache.sqlite"


def test_every_path_setting_resolves_against_the_config_file_even_nested(tmp_path: Path) -> None:
    keys = path_settings()
    assert ("agent", "frames", "cache_dir") in keys  # nested two levels down
    doc: dict = {}
    for key in keys:
        node = doc
        for part in key[:-1]:
            node = node.setdefault(part, {})
        node[key[-1]] = f"rel/{'_'.join(key)}"
    config = load_config(write(tmp_path, json.dumps(doc)))  # JSON is YAML
    for key in keys:
        value = config
        for part in key:
            value = getattr(value, part)
        assert value == (tmp_path / f"rel/{'_'.join(key)}").resolve(), key


def test_the_path_settings_are_the_ones_the_fingerprint_hashes_by_content() -> None:
    # data.benchmark is a name or an adapter file: typed as text, its file still counts by content.
    assert {".".join(k) for k in path_settings()} | {"data.benchmark"} == set(PATH_CONTENT)


def test_a_benchmark_file_resolves_against_the_config_and_counts_by_content(tmp_path: Path) -> None:
    adapter = tmp_path / "exp" / "mine.yaml"
    adapter.parent.mkdir()
    text = "format: jsonl\nvideo_id: clip\nquestion: q\ntask_type: {constant: T}\n"
    text += "options: {form: list, field: choices}\nanswer: {field: gold, form: index0}\n"
    adapter.write_text(text)
    path = tmp_path / "exp" / "config.yaml"
    path.write_text("data:\n  benchmark: mine.yaml\n")
    config = load_config(path)
    assert config.data.benchmark == str(adapter.resolve())
    before = config.settings()["data.benchmark"]
    assert before.startswith("sha256:")
    adapter.write_text(text.replace("index0", "index1"))
    assert load_config(path).settings()["data.benchmark"] != before
    assert load_config(None).settings()["data.benchmark"] == "videomme"
    with pytest.raises(ConfigError, match="unknown benchmark 'videomm'"):
        load_config(None, {"data.benchmark": "videomm"})


@pytest.mark.parametrize(
    ("text", "needle"), [("agent: [1, 2", "not valid YAML"), ("- 1\n- 2\n", "must be a mapping")]
)
def test_malformed_yaml_is_a_clear_error(tmp_path: Path, text: str, needle: str) -> None:
    with pytest.raises(ConfigError, match=needle):
        load_config(write(tmp_path, text))


def test_missing_config_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="config file not found"):
        load_config(tmp_path / "nope.yaml")


def test_defaults_without_a_file() -> None:
    config = load_config()
    assert config.eval.run_holdout_eval is None, "holdout must be an explicit decision"
    assert config.cache.ttl == "never"


def test_home_relative_paths_expand_to_the_home_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    config = load_config(write(tmp_path, "data:\n  questions: ~/q.json\n"))
    assert config.data.questions == tmp_path / "home" / "q.json"


def test_an_empty_path_is_an_error_not_the_current_folder(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"data\.videos_dir: .*empty path"):
        load_config(write(tmp_path, 'data:\n  videos_dir: ""\n'))


def test_a_non_text_section_name_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="section names must be text"):
        load_config(write(tmp_path, "1: 2\n"))


def test_fingerprint_covers_what_changes_answers_and_ignores_how_a_run_executes(tmp_path: Path) -> None:
    base = load_config(write(tmp_path, "agent:\n  concurrency: 4\n"))
    operational = {
        "agent.concurrency": 2,
        "store.url": "sqlite:////elsewhere/runs.sqlite",
        "cache.url": "sqlite:////elsewhere/cache.sqlite",
        "llm.timeouts": {"read_s": 5.0},
        "llm.retry": {"max_attempts": 2},
        # Which replica serves a request does not change its answer (issue 32.1).
        "llm.endpoints": [{"base_url": "http://127.0.0.1:9999/v1", "max_in_flight": 3, "name": "replica"}],
    }
    for key, value in operational.items():
        changed = load_config(tmp_path / "experiment.yaml", {key: value})
        assert changed.fingerprint() == base.fingerprint(), key
    answering = {
        "llm.model": "another-model",
        "agent.sampling": {"temperature": 0.7},
        "agent.max_frames": 8,
        "agent.vision": False,
        "cache.salt": "fresh",
        "llm.endpoints": [{"base_url": "http://127.0.0.1:8000/v1", "send_sample_idx": False}],
    }
    for key, value in answering.items():
        changed = load_config(tmp_path / "experiment.yaml", {key: value})
        assert changed.fingerprint() != base.fingerprint(), key


def test_a_bad_environment_value_is_blamed_on_the_variable_not_the_yaml_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path, "agent:\n  concurrency: 4\n")
    monkeypatch.setenv("SKILLHARNESS_AGENT__CONCURRENCY", "lots")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    message = str(info.value)
    assert "agent.concurrency" in message
    assert "(in the environment (SKILLHARNESS_AGENT__CONCURRENCY))" in message
    assert f"(in {path})" not in message


@pytest.mark.parametrize("value", ["0", "3600"])
def test_a_bare_number_ttl_says_to_write_never_or_a_duration(tmp_path: Path, value: str) -> None:
    path = write(tmp_path, f"cache:\n  ttl: {value}\n")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    message = str(info.value)
    assert "cache.ttl" in message
    assert "'never'" in message
    assert "'3600s'" in message
    assert "valid string" not in message


def test_a_key_given_twice_is_an_error_naming_both_lines(tmp_path: Path) -> None:
    path = write(tmp_path, "train:\n  batch_size: 0\n  epochs: 2\n  batch_size: 8\n")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    message = str(info.value)
    assert str(path) in message
    assert "found the key 'batch_size' twice (first on line 2)" in message
    assert "line 4" in message
    merged = write(tmp_path, "x: &a {epochs: 2}\ntrain:\n  <<: *a\n  epochs: 3\n")  # a merge key is no twin
    with pytest.raises(ConfigError, match="unknown key 'x'"):
        load_config(merged)


@pytest.mark.parametrize("value", ["per_drew", "1.5"])
def test_a_bad_value_of_a_union_setting_is_blamed_on_the_file_under_its_own_key(
    tmp_path: Path, value: str
) -> None:
    path = write(tmp_path, f"agent:\n  sampling:\n    temperature: 0.7\n    seed: {value}\n")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    message = str(info.value)
    assert "agent.sampling.seed: " in message
    assert f"(in {path})" in message
    assert "environment" not in message
    assert "seed.int" not in message


def test_a_variable_with_one_underscore_after_its_section_is_an_error_naming_the_fix(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SKILLHARNESS_TRAIN_BATCH_SIZE", "4")
    with pytest.raises(ConfigError) as info:
        load_config()
    assert "SKILLHARNESS_TRAIN_BATCH_SIZE" in str(info.value)
    assert "SKILLHARNESS_TRAIN__BATCH_SIZE" in str(info.value)
    monkeypatch.delenv("SKILLHARNESS_TRAIN_BATCH_SIZE")
    monkeypatch.setenv("SKILLHARNESS_VIDEOMME_QUESTIONS", "/elsewhere")  # no section's name: not ours
    assert load_config().train.batch_size == 8


@pytest.mark.parametrize(
    ("name", "value"), [("SKILLHARNESS_TRAIN", "x"), ("SKILLHARNESS_LLM__ENDPOINTS", "garbage")]
)
def test_a_section_or_list_variable_that_is_not_json_names_the_variable(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str
) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError) as info:
        load_config()
    assert f"environment variable {name}: not valid JSON" in str(info.value)


def test_a_folder_given_as_the_config_says_to_name_the_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="is a folder; name the experiment's YAML file"):
        load_config(tmp_path)


def test_an_empty_or_null_path_variable_is_unset_never_a_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    """``VAR=`` is a shell user's "unset", never the working folder; ``null`` is None, never a folder
    named ``null``; a set path still reads as the path."""
    monkeypatch.setenv("SKILLHARNESS_AGENT__BUNDLE", "")
    monkeypatch.setenv("SKILLHARNESS_TRAIN__PROMPTS_DIR", "null")
    config = load_config()
    assert config.agent.bundle is None
    assert config.train.prompts_dir is None
    monkeypatch.setenv("SKILLHARNESS_AGENT__BUNDLE", "my-bundle")
    assert load_config().agent.bundle == Path("my-bundle")


def test_null_for_a_setting_that_must_be_text_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKILLHARNESS_LLM__MODEL", "null")
    with pytest.raises(ConfigError, match=r"llm\.model.*SKILLHARNESS_LLM__MODEL"):
        load_config()
