"""``skillharness bundle export`` as a user runs it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from bench_support import Bench, experiment_doc
from cli_support import command_app, run_cli
from skillharness.commands import bundle as bundle_cmd
from skillharness.config import Config, load_config
from skillharness.data.pools import load_pools
from skillharness.errors import ConfigError
from skillharness.eval import FINAL
from skillharness.skills import (
    Bundle,
    EditRecord,
    EditTarget,
    ExportError,
    MomentumUpdate,
    VersionReason,
    Workspace,
    load_json_export,
    read_skills_folder,
)
from skillharness.store import RunKind, RunMetric, RunProvenance, RunStatus, RunStore

APP = command_app(bundle_cmd.register)


@pytest.mark.parametrize("fmt", ["prompt", "skills", "json"])
def test_export_writes_each_format(
    tmp_path: Path, bundle_dir: Path, default_bundle: Bundle, fmt: str
) -> None:
    out = tmp_path / f"out-{fmt}"
    args = ["bundle", "export", str(bundle_dir), "--format", fmt, "--out", str(out)]
    result = CliRunner().invoke(APP, args)
    assert result.exit_code == 0, result.output
    assert f"exported {bundle_dir} as {fmt}" in result.output
    assert f"bundle hash {default_bundle.bundle_hash}" in result.output
    if fmt == "json":
        assert load_json_export(out) == default_bundle
    elif fmt == "skills":
        assert len(read_skills_folder(out)) == len(default_bundle.skills) + 1
    else:
        assert "For questions of task type OCR Problems, follow:" in out.read_text(encoding="utf-8")


def test_export_refuses_an_existing_out_unless_forced(tmp_path: Path, bundle_dir: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "bundle.json"
    out.write_text("keep me")
    args = ["bundle", "export", str(bundle_dir), "--format", "json", "--out", str(out)]
    refused = runner.invoke(APP, args)
    assert isinstance(refused.exception, ExportError)
    assert f"--out {out}: already exists; pass --force" in str(refused.exception)
    assert out.read_text() == "keep me"
    forced = runner.invoke(APP, [*args, "--force"])
    assert forced.exit_code == 0, forced.output
    assert load_json_export(out) == Bundle.load(bundle_dir)


def test_export_refuses_a_folder_that_is_not_a_bundle(tmp_path: Path) -> None:
    folder = tmp_path / "photos"
    folder.mkdir()
    (folder / "cat.jpg").write_bytes(b"\xff\xd8")
    out = tmp_path / "out.md"
    args = ["bundle", "export", str(folder), "--format", "prompt", "--out", str(out)]
    result = CliRunner().invoke(APP, args)
    assert isinstance(result.exception, ExportError)
    assert f"{folder}: not a bundle folder" in str(result.exception)
    assert not out.exists()


def test_export_needs_a_bundle_or_a_run_with_its_config(tmp_path: Path, bundle_dir: Path) -> None:
    runner = CliRunner()
    out = ["--format", "json", "--out", str(tmp_path / "x.json")]
    nothing = runner.invoke(APP, ["bundle", "export", *out])
    assert isinstance(nothing.exception, ConfigError)
    assert "--config X --run R" in str(nothing.exception)
    both = runner.invoke(APP, ["bundle", "export", str(bundle_dir), "--run", "r1", *out])
    assert isinstance(both.exception, ConfigError)
    assert "give --config, and no BUNDLE_DIR" in str(both.exception)


def test_a_refused_export_exits_2_with_one_line(tmp_path: Path) -> None:
    proc = run_cli("bundle", "export", str(tmp_path), "--format", "skills", "--out", str(tmp_path / "out"))
    assert proc.returncode == 2
    assert "not a bundle folder" in proc.stderr
    assert "Traceback" not in proc.stderr


async def _finished_training_run(config: Config, run_id: str, bundle: Bundle, final: dict[str, str]) -> None:
    """A finished training run in the store, with the final-bundle reference the loop records."""
    assert config.data.pools is not None
    provenance = RunProvenance(
        run_id=run_id,
        kind=RunKind.TRAIN,
        config_hash="test",
        bundle_hash=bundle.bundle_hash,
        pools_sha256=load_pools(config.data.pools).sha256,
        pool="train",
        model=config.llm.model,
        endpoints=tuple(ep.base_url for ep in config.llm.endpoints),
        sampling=config.agent.sampling,
    )
    with RunStore.open(config.store) as store:
        log = await store.open_run(provenance)
        await log.close(RunStatus.FINISHED)
        store.upsert([RunMetric(run_id=run_id, name=FINAL, value=final)])


def test_export_of_a_training_runs_final_bundle(tmp_path: Path, bench: Bench) -> None:
    # No endpoint is asked: the run's final bundle is found through the store and the workspace.
    doc = experiment_doc(tmp_path, bench, model="m", base_url="http://127.0.0.1:9/v1", vision=False)
    config_path = tmp_path / "experiment.yaml"
    config_path.write_text(yaml.safe_dump(doc))
    base = Bundle.load(bench.bundle)
    final = base.with_momentum("OCR Problems", MomentumUpdate.sanitized("Read every glyph twice."))
    workspace = Workspace.create(tmp_path / "workspace", base)
    record = EditRecord(target=EditTarget.system(), reason=VersionReason.MANUAL)
    version = workspace.commit(final, "v0000", record)
    reference = {"workspace": str(workspace.path), "version": version, "bundle_hash": final.bundle_hash}
    asyncio.run(_finished_training_run(load_config(config_path), "train-1", base, reference))

    out = tmp_path / "final.json"
    args = ["bundle", "export", "--config", str(config_path), "--run", "train-1", "--format", "json"]
    result = CliRunner().invoke(APP, [*args, "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert f"train-1 ({version})" in result.output
    assert load_json_export(out).bundle_hash == final.bundle_hash
