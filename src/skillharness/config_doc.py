"""A config as commented YAML: each key's comment is the description its model gives it.

The comments are read from the config models (a field's ``description``, a section's docstring),
never written a second time, so a generated ``experiment.yaml`` cannot drift from
``docs/config.md`` or from the code that reads it. A writer may add a *note* to a key (why it
chose that value); the meaning stays the model's.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from typing import Any, get_args

import yaml
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from skillharness.config import Config
from skillharness.errors import ConfigError

__all__ = ["commented_yaml"]

_INDENT = "  "


def commented_yaml(
    values: Mapping[str, Any],
    *,
    notes: Mapping[str, str] | None = None,
    header: Sequence[str] = (),
    width: int = 100,
) -> str:
    """``values`` (nested sections of :class:`Config`) as YAML, every key commented.

    ``notes`` maps a dotted key (``eval.run_holdout_eval``) to a line added under its description.
    A key the config does not know raises :class:`ConfigError`: the file would not load.
    """
    lines = [f"# {line}" if line else "#" for line in header]
    _mapping(lines, values, Config, "", 0, dict(notes or {}), width)
    return "\n".join(lines) + "\n"


def _mapping(
    lines: list[str],
    values: Mapping[str, Any],
    model: type[BaseModel],
    prefix: str,
    depth: int,
    notes: dict[str, str],
    width: int,
) -> None:
    pad = _INDENT * depth
    for key, value in values.items():
        field = model.model_fields.get(key)
        if field is None:
            raise ConfigError(f"{prefix}{key}: not a setting of {model.__name__}", field=f"{prefix}{key}")
        dotted = f"{prefix}{key}"
        if depth == 0 and lines and lines[-1] != "":
            lines.append("")
        for text in (_description(field), notes.get(dotted)):
            if text:
                lines.extend(
                    textwrap.wrap(text, width, initial_indent=f"{pad}# ", subsequent_indent=f"{pad}# ")
                )
        _value(lines, f"{pad}{key}:", value, field.annotation, dotted, depth, notes, width)


def _value(
    lines: list[str],
    head: str,
    value: Any,
    annotation: Any,
    dotted: str,
    depth: int,
    notes: dict[str, str],
    width: int,
) -> None:
    model = _model_in(annotation)
    if isinstance(value, Mapping) and model is not None and _is_mapping_of(annotation):
        lines.append(head)  # free names (train.roles.<role>), each a ``model``
        for name, item in value.items():
            lines.append(f"{_INDENT * (depth + 1)}{name}:")
            _mapping(lines, item, model, f"{dotted}.{name}.", depth + 2, notes, width)
    elif isinstance(value, Mapping) and model is not None:
        lines.append(head)
        _mapping(lines, value, model, f"{dotted}.", depth + 1, notes, width)
    elif isinstance(value, list | tuple) and model is not None:
        lines.append(head)
        for item in value:
            lines.append(f"{_INDENT * (depth + 1)}-")  # the item's keys follow, one level deeper
            _mapping(lines, item, model, f"{dotted}[].", depth + 2, notes, width)
    else:
        lines.append(f"{head} {_scalar(value)}")


def _description(field: FieldInfo) -> str | None:
    """A field's description, else the first sentence of its section model's docstring."""
    if field.description:
        return field.description
    model = _model_in(field.annotation)
    doc = (model.__doc__ or "").strip() if model is not None else ""
    return doc.split("\n\n")[0].replace("\n", " ") if doc else None


def _model_in(annotation: Any) -> type[BaseModel] | None:
    """The config model a field holds, directly or inside ``X | None``, a tuple or a dict."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in get_args(annotation):
        found = _model_in(arg)
        if found is not None:
            return found
    return None


def _is_mapping_of(annotation: Any) -> bool:
    return getattr(annotation, "__origin__", None) is dict


def _scalar(value: Any) -> str:
    if isinstance(value, list | tuple):
        return yaml.safe_dump(list(value), default_flow_style=True, width=10_000).strip()
    text = yaml.safe_dump(value, default_flow_style=True, width=10_000).strip()
    return text.removesuffix("...").strip()
