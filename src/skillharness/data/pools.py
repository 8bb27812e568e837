"""The frozen split's artifacts on disk: ``pools.json`` and ``split_manifest.json``.

Written atomically, never replaced without ``force`` (which first moves the old files into a
timestamped backup folder, audit P2-1), and verifiable: :func:`verify_split` re-hashes and
re-counts everything the manifest claims.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, get_args

from skillharness.data.adapter import load_adapter
from skillharness.data.config import DEFAULT_BENCHMARK
from skillharness.data.convert import load_benchmark
from skillharness.data.questions import Question
from skillharness.data.split import Pool, Split, UnitKind, count_table, group_units
from skillharness.errors import DataError, SplitError
from skillharness.util.atomic import (
    atomic_write_files,
    fsync_dir,
    json_bytes,
    sha256_bytes,
    sha256_file,
)

__all__ = [
    "MANIFEST_FILE",
    "POOLS_FILE",
    "SCHEMA_VERSION",
    "FrozenPools",
    "WriteResult",
    "existing_artifacts",
    "load_pools",
    "pools_bytes",
    "source_drift",
    "source_sha256",
    "verify_split",
    "write_split",
]

_LISTED_OVERLAPS = 10  # enough to see the pattern of a hand edit

POOLS_FILE = "pools.json"
MANIFEST_FILE = "split_manifest.json"
SCHEMA_VERSION = 1


@dataclass(frozen=True)
class FrozenPools:
    """The question ids of each pool, as later stages read them."""

    unit: UnitKind
    units: dict[Pool, tuple[str, ...]]
    questions: dict[Pool, tuple[str, ...]]
    sha256: str

    def pool_of(self) -> dict[str, Pool]:
        return {qid: pool for pool, qids in self.questions.items() for qid in qids}

    def units_of(self, questions: Sequence[Question]) -> list[tuple[Question, ...]]:
        """``questions`` grouped into this split's units (a video's questions stay together)."""
        return group_units(questions, self.unit)


@dataclass(frozen=True)
class WriteResult:
    pools_path: Path
    manifest_path: Path
    pools_sha256: str
    backup_dir: Path | None


def pools_bytes(split: Split) -> bytes:
    """The exact bytes of ``pools.json`` for ``split`` (its sha256 is the split's identity)."""
    return json.dumps(_pools_document(split), indent=2, sort_keys=True).encode() + b"\n"


def _pools_document(split: Split) -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION,
        "unit": split.params.unit,
        "pools": {
            name: {"units": [u.id for u in units], "question_ids": [q for u in units for q in u.question_ids]}
            for name, units in split.pools.items()
        },
    }


def source_sha256(source: Path) -> str:
    """The sha256 of a questions file, or of a per-task folder (each file's name and sha256, sorted)."""
    if not source.is_dir():
        return sha256_file(source)
    files = sorted(p for p in source.rglob("*") if p.is_file() and not p.name.startswith("."))
    listing = "".join(f"{p.relative_to(source).as_posix()}\t{sha256_file(p)}\n" for p in files)
    return sha256_bytes(listing.encode())


def _manifest(
    split: Split, questions: Sequence[Question], source: Path, source_sha: str, pools_sha: str, version: str
) -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION,
        "package_version": version,
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "source": {"path": str(source.resolve()), "sha256": source_sha, "questions": len(questions)},
        "parameters": split.params.model_dump(mode="json"),
        "pool_sizes": {
            name: {"units": len(units), "questions": sum(len(u.question_ids) for u in units)}
            for name, units in split.pools.items()
        },
        "counts": count_table(split, questions),
        "unmet_min_val_per_class": list(split.unmet_min_val),
        "pools_sha256": pools_sha,
    }


def existing_artifacts(out_dir: Path) -> list[Path]:
    return [out_dir / name for name in (POOLS_FILE, MANIFEST_FILE) if (out_dir / name).exists()]


def write_split(
    split: Split,
    questions: Sequence[Question],
    source: Path,
    out_dir: Path,
    *,
    force: bool,
    version: str,
    benchmark: str = DEFAULT_BENCHMARK,
) -> WriteResult:
    """Write both artifacts atomically; refuse to replace existing ones unless ``force``.

    ``benchmark`` (the adapter ``source`` was read through) is recorded, so ``split verify``
    re-reads the source as the split did.
    """
    if out_dir.exists() and not out_dir.is_dir():
        raise SplitError(f"--out {out_dir} exists and is not a folder", file=str(out_dir))
    out_dir.mkdir(parents=True, exist_ok=True)
    existing = existing_artifacts(out_dir)
    if existing and not force:
        # A folder in a file's place has no sha256 to show (hashing it would end in "Is a directory").
        listing = ", ".join(
            f"{p.name} (sha256 {sha256_file(p)})" if p.is_file() else f"{p.name} (a folder)" for p in existing
        )
        raise SplitError(
            f"split artifacts already exist in {out_dir}: {listing}. They are frozen evidence; "
            "pass --force to replace them (the old files are backed up first).",
            files=[str(p) for p in existing],
        )
    backup = _backup(out_dir, existing) if existing else None
    data = pools_bytes(split)
    pools_sha = sha256_bytes(data)
    manifest = _manifest(split, questions, source, source_sha256(source), pools_sha, version)
    manifest["source"]["benchmark"] = benchmark
    # Both or neither: a pools.json without its manifest would be refused as "manifest missing".
    atomic_write_files({out_dir / POOLS_FILE: data, out_dir / MANIFEST_FILE: json_bytes(manifest)})
    return WriteResult(out_dir / POOLS_FILE, out_dir / MANIFEST_FILE, pools_sha, backup)


def _backup(out_dir: Path, files: Sequence[Path]) -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    backup = out_dir / f"backup-{stamp}"
    backup.mkdir()
    for path in files:
        os.replace(path, backup / path.name)
    fsync_dir(backup)
    fsync_dir(out_dir)
    return backup


def load_pools(path: Path, expected_sha256: str | None = None) -> FrozenPools:
    """Read ``pools.json``; with ``expected_sha256`` a mismatch is an error, never a warning."""
    if not path.is_file():
        raise SplitError(f"pools file not found: {path}", file=str(path))
    data = path.read_bytes()
    digest = sha256_bytes(data)
    if expected_sha256 is not None and digest != expected_sha256:
        raise SplitError(
            f"{path}: sha256 {digest} does not match the expected {expected_sha256}; "
            "the frozen split was changed",
            file=str(path),
        )
    try:
        doc = json.loads(data)
        if doc.get("schema_version") != SCHEMA_VERSION:
            raise SplitError(f"{path}: unsupported pools schema_version {doc.get('schema_version')!r}")
        pools = doc["pools"]
        units = {name: tuple(pools[name]["units"]) for name in Pool}
        qids = {name: tuple(pools[name]["question_ids"]) for name in Pool}
        unit = doc["unit"]
    except (json.JSONDecodeError, UnicodeDecodeError, KeyError, TypeError, AttributeError) as exc:
        raise SplitError(f"{path}: not a valid pools file: {exc!r}", file=str(path)) from exc
    if unit not in get_args(UnitKind):
        raise SplitError(f"{path}: unit must be one of {get_args(UnitKind)}, got {unit!r}", file=str(path))
    problems = _overlaps("question id", qids) + _overlaps("unit", units)
    if problems:
        raise SplitError(f"{path}: not a split: {'; '.join(problems)}", file=str(path), problems=problems)
    return FrozenPools(unit, units, qids, digest)


def _overlaps(what: str, members: Mapping[Pool, tuple[str, ...]]) -> list[str]:
    """Names listed twice in one pool or in two pools: a hand-edited pools file (with no
    ``data.pools_sha256`` to catch it) would count a question twice or leak it into the test pool."""
    problems: list[str] = []
    seen: dict[str, Pool] = {}
    for pool, names in members.items():
        for name, count in Counter(names).items():
            if count > 1:
                problems.append(f"{what} {name!r} is listed {count} times in {pool}")
            if name in seen:
                problems.append(f"{what} {name!r} is in both {seen[name]} and {pool}")
            seen.setdefault(name, pool)
    return problems[:_LISTED_OVERLAPS]


def source_drift(pools_path: Path, questions: Path) -> str | None:
    """Why ``questions`` is not the file the split beside ``pools_path`` was made from (its
    manifest's source sha256), or None: the same file, or no manifest to compare with.

    An answer key edited after the split would otherwise train and score on answers the split's
    record does not hold; `split verify` says the same, but only when someone runs it."""
    manifest_path = pools_path.parent / MANIFEST_FILE
    if not manifest_path.is_file() or not questions.exists():
        return None
    try:
        recorded = _read_manifest(manifest_path).source_sha256
    except SplitError as exc:
        return str(exc)
    digest = source_sha256(questions)
    if digest == recorded:
        return None
    return (
        f"{questions} changed since the split was made (sha256 {digest[:12]}…, the manifest {manifest_path} "
        f"records {recorded[:12]}…): restore it, or split again; `skillharness split verify` checks the rest"
    )


@dataclass(frozen=True)
class _Manifest:
    """What ``split verify`` checks against, read from ``split_manifest.json``."""

    source: Path
    source_sha256: str
    benchmark: str
    counts: dict[str, Any]
    pool_sizes: dict[str, Any]
    pools_sha256: str


def _a(name: str) -> str:
    return f"{'an' if name[:1] in 'aeiou' else 'a'} {name}"


def _read_manifest(path: Path) -> _Manifest:
    """The manifest's recorded facts; SplitError naming the key when one is missing or of the wrong type."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise SplitError(f"{path}: unreadable manifest: {exc}", file=str(path)) from exc

    def field(kind: type, *keys: str) -> Any:
        value: Any = doc
        for key in keys:
            value = value.get(key) if isinstance(value, dict) else None
        if not isinstance(value, kind):  # a hand edit: say which key, not which Python error
            got = "missing" if value is None else _a(type(value).__name__)
            raise SplitError(
                f"{path}: unreadable manifest: key {'.'.join(keys)!r} is {got}, expected {_a(kind.__name__)}",
                file=str(path),
                key=".".join(keys),
            )
        return value

    source = field(dict, "source")
    return _Manifest(
        source=Path(field(str, "source", "path")),
        source_sha256=field(str, "source", "sha256"),
        # Manifests from before adapters name none: they were read as Video-MME.
        benchmark=str(source.get("benchmark", DEFAULT_BENCHMARK)),
        counts=field(dict, "counts"),
        pool_sizes=field(dict, "pool_sizes"),
        pools_sha256=field(str, "pools_sha256"),
    )


def verify_split(out_dir: Path, questions_path: Path | None = None) -> list[str]:
    """Re-check the artifacts in ``out_dir``; return the list of problems (empty = verified).

    A pools.json edited by hand is described, not only refused: its changed sha256, then what the
    edit did (a question in two pools, pool sizes and counts that no longer match)."""
    manifest_path = out_dir / MANIFEST_FILE
    if out_dir.is_file():
        return [f"{out_dir} is a file; give the folder holding {POOLS_FILE} and {MANIFEST_FILE}"]
    if not manifest_path.is_file():
        return [f"{manifest_path} is missing"]
    try:
        recorded = _read_manifest(manifest_path)
    except SplitError as exc:
        return [str(exc)]
    pools_path, problems = out_dir / POOLS_FILE, []
    if pools_path.is_file() and (digest := sha256_file(pools_path)) != recorded.pools_sha256:
        problems.append(
            f"{pools_path}: sha256 {digest} does not match the expected {recorded.pools_sha256} "
            f"recorded in {manifest_path}; the frozen split was changed"
        )
    try:
        pools = load_pools(pools_path)
    except SplitError as exc:
        return [*problems, str(exc)]
    sizes = {
        str(name): {"units": len(pools.units[name]), "questions": len(pools.questions[name])} for name in Pool
    }
    if sizes != recorded.pool_sizes:
        problems.append(f"pool sizes in pools.json {sizes} differ from the manifest's {recorded.pool_sizes}")
    return problems + _check_source(recorded, pools, questions_path or recorded.source, manifest_path)


def _check_source(recorded: _Manifest, pools: FrozenPools, source: Path, manifest_path: Path) -> list[str]:
    """The source's sha256 and the per-pool counts, re-read through the recorded adapter."""
    if not source.exists():
        return [f"source questions file {source} not found; pass --questions to re-check counts"]
    if (digest := source_sha256(source)) != recorded.source_sha256:
        return [f"source {source}: sha256 {digest} != manifest {recorded.source_sha256}"]
    try:
        adapter = load_adapter(recorded.benchmark)
    except DataError as exc:  # the manifest names the adapter: say so, or the user looks at the flags
        return [f"{manifest_path}: source.benchmark {recorded.benchmark!r}: {exc}"]
    problems: list[str] = []
    questions = load_benchmark(source, adapter).questions
    if _recount(pools, questions, source, problems) != recorded.counts:
        problems.append("per-pool counts recomputed from pools.json differ from the manifest")
    return problems


def _recount(
    pools: FrozenPools, questions: Sequence[Question], source: Path, problems: list[str]
) -> dict[str, dict[str, dict[str, int]]]:
    """Questions per pool x task type x duration, as the manifest's ``counts``; unknown ids are problems."""
    by_id = {q.question_id: q for q in questions}
    recount: dict[str, dict[str, dict[str, int]]] = {}
    for pool, qids in pools.questions.items():
        cells: dict[str, dict[str, int]] = {}
        for qid in qids:
            if qid not in by_id:
                problems.append(f"pool {pool}: question {qid} is not in {source}")
                continue
            q = by_id[qid]
            cells.setdefault(q.task_type, {}).setdefault(q.duration, 0)
            cells[q.task_type][q.duration] += 1
        recount[pool] = dict(sorted(cells.items()))
    return recount
