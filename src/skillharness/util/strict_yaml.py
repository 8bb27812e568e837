"""YAML as the user wrote it: a mapping that gives one key twice is an error, not its last value.

PyYAML keeps the last of two equal keys without a word, so `batch_size: 0` above `batch_size: 8`
would set 8 and hide the first line from its author. Every file a user writes (the config, an
adapter, a bundle's tools, a simulator world) is read through here.

Booleans are YAML 1.2's: only ``true`` and ``false``. PyYAML reads YAML 1.1, where ``off``, ``no``,
``on`` and ``yes`` are booleans too, so a column named ``off`` or a missing-option marker ``no``
would arrive as ``False``. A boolean setting written ``yes`` still means true: the config's models
read the words ``yes``/``no``/``on``/``off`` as booleans.
"""

from __future__ import annotations

import re
from typing import Any

import yaml
from yaml.constructor import ConstructorError
from yaml.resolver import Resolver

__all__ = ["safe_load"]


class _UniqueKeyLoader(yaml.SafeLoader):
    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, yaml.Node] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":  # `<<:` keys are overridden by design
                continue
            key = self.construct_object(key_node, deep=True)
            try:
                first = seen.get(key)
            except TypeError:  # an unhashable key: SafeLoader's own error says so
                break
            if first is not None:
                raise ConstructorError(
                    "while constructing a mapping",
                    node.start_mark,
                    f"found the key {key!r} twice (first on line {first.start_mark.line + 1})",
                    key_node.start_mark,
                )
            seen[key] = key_node
        return super().construct_mapping(node, deep=deep)


_BOOL = "tag:yaml.org,2002:bool"
_UniqueKeyLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != _BOOL]
    for first, resolvers in Resolver.yaml_implicit_resolvers.items()
}
_UniqueKeyLoader.add_implicit_resolver(
    _BOOL, re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)


def safe_load(text: str) -> Any:
    """``yaml.safe_load``, refusing a duplicate key with a ``yaml.YAMLError`` naming both lines."""
    return yaml.load(text, Loader=_UniqueKeyLoader)
