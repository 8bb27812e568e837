"""A questions file (or a folder of per-task files) as rows, checked to fit its adapter, and
the adapter's separate answers file."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from skillharness.data.adapter import Adapter, builtin_adapters
from skillharness.data.convert_rows import Row, cell_text
from skillharness.data.loader import json_error, read_rows
from skillharness.errors import DataError

__all__ = ["check_fit", "read_all_rows", "read_answers"]

_KNOWN_SUFFIXES = (".json", ".jsonl", ".csv", ".tsv", ".parquet")


def read_all_rows(source: Path, adapter: Adapter) -> list[Row]:
    if adapter.format == "folder":
        if not source.is_dir():
            raise DataError(
                f"{source}: adapter {adapter.name!r} reads a folder of per-task files, not a file",
                file=str(source),
            )
        files = sorted({p for pattern in adapter.files for p in source.glob(pattern) if p.is_file()})
        if not files:
            raise DataError(
                f"{source}: no file matches {list(adapter.files)} (adapter {adapter.name!r})",
                file=str(source),
            )
        return [row for path in files for row in _rows_of(path, path.suffix.lower())]
    if source.is_dir():  # a per-task folder read as a single file: the benchmark is not set
        raise DataError(
            f"{source}: a folder, but adapter {adapter.name!r} reads one {adapter.format} file; a folder "
            "of per-task files needs its own adapter (data.benchmark / --benchmark, e.g. mvbench)",
            file=str(source),
            adapter=adapter.name,
        )
    if not source.is_file():
        raise DataError(f"questions file not found: {source}", file=str(source))
    # A known suffix wins (Video-MME ships parquet, copies come as JSON); the declared format reads
    # a file whose name does not say (a ".txt" export).
    suffix = source.suffix.lower()
    return list(_rows_of(source, suffix if suffix in _KNOWN_SUFFIXES else "." + adapter.format))


def _rows_of(path: Path, suffix: str) -> Iterable[Row]:
    for number, data in enumerate(read_rows(path, suffix), start=1):
        yield Row(f"{path}: row {number}", number, path.stem, data)


def check_fit(source: Path, rows: list[Row], adapter: Adapter) -> None:
    """One error when no row has the adapter's fields: the wrong adapter, or a file of another layout."""
    expected = adapter.required_fields
    if not rows or any(all(name in row.data for name in expected) for row in rows):
        return
    by_fields: dict[tuple[str, ...], list[int]] = {}
    for row in rows:
        by_fields.setdefault(tuple(row.data), []).append(row.number)
    lines = [
        f"expects fields: {', '.join(expected)}",
        *(_fields_line(numbers, found, expected) for found, numbers in list(by_fields.items())[:5]),
        _other_fits(adapter, rows[0]),
    ]
    raise DataError(
        f"{source} does not fit adapter {adapter.name!r} (no row has all its fields):\n  "
        + "\n  ".join(lines),
        file=str(source),
        adapter=adapter.name,
        expected=list(expected),
        found={", ".join(k): v for k, v in by_fields.items()},
    )


def _fields_line(numbers: list[int], found: tuple[str, ...], expected: tuple[str, ...]) -> str:
    verb = "has" if len(numbers) == 1 else "have"
    missing = ", ".join(name for name in expected if name not in found)
    return f"{_row_span(numbers)} {verb}: {', '.join(found) or '(none)'}; missing: {missing}"


def _other_fits(adapter: Adapter, row: Row) -> str:
    """Which built-in adapters the first row would fit, so the error says what to try instead."""
    fits = [
        name
        for name, other in sorted(builtin_adapters().items())
        if name != adapter.name and all(f in row.data for f in other.required_fields)
    ]
    if fits:
        return f"the rows fit the built-in adapter(s): {', '.join(fits)} (--benchmark {fits[0]})"
    return "no built-in adapter fits either: describe the layout in an adapter YAML (docs/data.md)"


def _row_span(numbers: list[int]) -> str:
    if len(numbers) == 1:
        return f"row {numbers[0]}"
    shown = ", ".join(str(n) for n in numbers[:5])
    return f"rows {shown}{', …' if len(numbers) > 5 else ''} ({len(numbers)} rows)"


def read_answers(source: Path, adapter: Adapter, override: Path | str | None) -> dict[str, Any] | None:
    spec = adapter.answers
    if spec is None:
        if override is not None:  # ignoring it would score against the answers in the rows
            raise DataError(
                f"answers file {override}: adapter {adapter.name!r} reads each answer from its question "
                "row and has no separate answers file; drop --answers, or use an adapter with "
                "an `answers:` section",
                file=str(override),
            )
        return None
    base = source if source.is_dir() else source.parent
    path = Path(override) if override is not None else base / spec.file
    if path.is_dir():
        raise DataError(
            f"answers file {path} is a folder, not a file (adapter {adapter.name!r})", file=str(path)
        )
    if not path.is_file():
        raise DataError(f"answers file not found: {path} (adapter {adapter.name!r})", file=str(path))
    if spec.id_field is None:
        try:
            data = json.loads(path.read_text(encoding="utf-8-sig"))
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:
            raise DataError(f"{path}: not valid JSON: {json_error(exc)}", file=str(path)) from exc
        if not isinstance(data, dict):
            raise DataError(
                f"{path}: expected a JSON object {{question id: answer}}, got {type(data).__name__}",
                file=str(path),
            )
        return {str(k): v for k, v in data.items()}
    found: dict[str, Any] = {}
    for number, row in enumerate(read_rows(path), start=1):
        if spec.id_field not in row or spec.answer_field not in row:
            raise DataError(
                f"{path}: row {number}: expects fields {spec.id_field}, {spec.answer_field}; "
                f"has {', '.join(row) or '(none)'}",
                file=str(path),
                row=number,
            )
        found[cell_text(row[spec.id_field])] = row[spec.answer_field]
    return found
