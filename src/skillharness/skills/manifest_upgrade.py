"""Workspace manifests of schema 1, read as schema 2.

Schema 1 recorded each version's edit as a label and a sentence (``"target": "skill:ocr_problems"``,
``"reason": "accept: wealth 21.3 >= 20"``). Schema 2 types them: an ``EditTarget`` (None for the
initial version), a ``VersionReason`` and the sentence's evidence as ``detail``. A workspace is a
user's evidence, so an old one keeps opening; the next commit writes it as schema 2.
"""

from __future__ import annotations

from typing import Any

__all__ = ["upgrade_manifest"]

_INITIAL = "initial"


def upgrade_manifest(doc: Any) -> Any:
    """``doc`` as schema 2 when it is a schema-1 manifest (a new object); anything else unchanged."""
    if not isinstance(doc, dict) or doc.get("schema_version") != 1:
        return doc
    versions = doc.get("versions")
    if isinstance(versions, list):
        versions = [_upgrade_version(v) for v in versions]
    return {**doc, "schema_version": 2, "versions": versions}


def _upgrade_version(version: Any) -> Any:
    edit = version.get("edit") if isinstance(version, dict) else None
    if not isinstance(edit, dict) or not isinstance(edit.get("target"), str):
        return version  # not a schema-1 record: validation names what is wrong with it
    label, sentence = edit["target"], str(edit.get("reason", ""))
    if label == _INITIAL:
        target, reason, detail = None, "initial", sentence
    else:
        kind, _, name = label.partition(":")
        target = {"kind": kind, "name": name or None}
        reason, detail = _reason_of(sentence)
    typed = {**edit, "target": target, "reason": reason, "detail": detail}
    return {**version, "edit": typed}


def _reason_of(sentence: str) -> tuple[str, str]:
    if sentence.startswith("accept"):
        return "accepted", sentence.removeprefix("accept").lstrip(": ")
    if sentence.startswith("slow momentum"):
        return "momentum", sentence
    return "manual", sentence
