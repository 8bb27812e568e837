"""Bundles: folder layout, validation errors, canonical and relevant hashes."""

from __future__ import annotations

import copy
import hashlib
import json
import pickle
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillharness.data.questions import VIDEO_MME, TaskType, slugify
from skillharness.errors import SkillError
from skillharness.llm.roles import AGENT_TOOL_NAMES
from skillharness.skills import (
    Bundle,
    Edit,
    EditOp,
    EditSet,
    EditTarget,
    MomentumUpdate,
    Refusal,
    RefusalReason,
    SkillDocument,
    canonical_bytes,
    content_hash,
)
from skillharness.skills.markers import APPENDIX_MARKER


def _replace(anchor: str, text: str) -> EditSet:
    return EditSet(
        skill_update_mode="patch", edits=(Edit(op=EditOp.REPLACE, anchor=anchor, text=text),), rationale="r"
    )


def test_initial_bundle_covers_every_task_type_with_real_guidance(default_bundle: Bundle) -> None:
    assert default_bundle.missing_task_types(VIDEO_MME.task_types) == []
    assert set(default_bundle.skills) == {slugify(t) for t in TaskType}
    assert tuple(default_bundle.tools) == AGENT_TOOL_NAMES
    for slug, doc in default_bundle.skills.items():
        assert len(doc.body) > 400, slug
        assert "submit_answer" in doc.appendix
        assert "single option letter" in doc.appendix
        assert doc.momentum == ""
    assert "get_frames" in default_bundle.system_prompt
    assert "get_subtitles" in default_bundle.skill(TaskType.INFORMATION_SYNOPSIS).body


def test_save_load_round_trip(default_bundle: Bundle, bundle_dir: Path) -> None:
    loaded = Bundle.load(bundle_dir)
    assert loaded == default_bundle
    assert loaded.bundle_hash == default_bundle.bundle_hash
    for rel, data in default_bundle.files().items():
        assert (bundle_dir / rel).read_bytes() == data


def test_hash_is_canonical_sha256_of_content(default_bundle: Bundle, bundle_dir: Path) -> None:
    assert canonical_bytes({"b": 1, "a": "é"}) == '{"a":"é","b":1}'.encode()
    assert len(default_bundle.bundle_hash) == 64
    # Reformatting tools.yaml keeps the content, so the hash stays.
    tools = bundle_dir / "tools.yaml"
    tools.write_text(
        "\n".join(f"{name}: {json.dumps(desc)}" for name, desc in default_bundle.tools.items()) + "\n"
    )
    assert Bundle.load(bundle_dir).bundle_hash == default_bundle.bundle_hash
    # Any byte of any text changes it.
    (bundle_dir / "system.md").write_text(default_bundle.system_prompt + " ")
    assert Bundle.load(bundle_dir).bundle_hash != default_bundle.bundle_hash


def test_relevant_hash_changes_only_for_the_edited_skill(default_bundle: Bundle) -> None:
    before = default_bundle.relevant_hashes()
    assert default_bundle.relevant_hash("OCR Problems") == before["ocr_problems"]
    edited = default_bundle.apply(
        EditTarget.skill("OCR Problems"), _replace("Read character by character", "Read")
    )
    assert isinstance(edited, Bundle)
    after = edited.relevant_hashes()
    assert [slug for slug in before if before[slug] != after[slug]] == ["ocr_problems"]
    assert edited.bundle_hash != default_bundle.bundle_hash


def test_system_and_tool_edits_change_every_relevant_hash(default_bundle: Bundle) -> None:
    before = default_bundle.relevant_hashes()
    system = default_bundle.apply(
        EditTarget.system(), _replace("careful video analyst", "precise video analyst")
    )
    tool = default_bundle.apply(EditTarget.tool("submit_answer"), _replace("exactly", "precisely"))
    for edited in (system, tool):
        assert isinstance(edited, Bundle)
        assert all(edited.relevant_hashes()[slug] != before[slug] for slug in before)


def test_momentum_changes_one_relevant_hash(default_bundle: Bundle) -> None:
    updated = default_bundle.with_momentum("Counting Problem", MomentumUpdate(text="Count in pairs."))
    assert updated.skill("counting_problem").momentum == "Count in pairs.\n"
    changed = [s for s, h in updated.relevant_hashes().items() if h != default_bundle.relevant_hash(s)]
    assert changed == ["counting_problem"]


def test_edits_that_break_the_bundle_are_refusals(default_bundle: Bundle) -> None:
    empty_system = EditSet(skill_update_mode="rewrite", edits=(), body="", rationale="r")
    result = default_bundle.apply(EditTarget.system(), empty_system)
    assert isinstance(result, Refusal)
    assert result.reason is RefusalReason.MALFORMED_EDIT
    marker = default_bundle.apply(EditTarget.tool("get_frames"), _replace("Return", APPENDIX_MARKER))
    assert isinstance(marker, Refusal)
    assert marker.reason is RefusalReason.MARKER_IN_TEXT
    with pytest.raises(SkillError, match="no skill for task type"):
        default_bundle.apply(EditTarget.skill("Unknown Type"), _replace("a", "b"))


@pytest.mark.parametrize(
    ("damage", "words"),
    [
        (lambda d: (d / "system.md").unlink(), "system.md: missing"),
        (lambda d: (d / "system.md").write_text("  \n"), "system prompt is empty"),
        (lambda d: (d / "tools.yaml").write_text("get_frames: [unclosed\n"), "tools.yaml:2: invalid YAML"),
        (lambda d: (d / "tools.yaml").write_text("- a list\n"), "mapping of tool name"),
        (
            lambda d: (d / "tools.yaml").write_text("get_frames: x\nget_subtitles: y\n"),
            "missing: ['submit_answer']",
        ),
        (
            lambda d: (d / "tools.yaml").write_text(
                "get_frames: x\nget_subtitles: y\nsubmit_answer: z\nzoom: q\n"
            ),
            "unknown: ['zoom']",
        ),
        (
            lambda d: (d / "tools.yaml").write_text("get_frames: x\nget_subtitles: y\nsubmit_answer: 3\n"),
            "non-empty",
        ),
        (
            lambda d: (d / "skills" / "ocr_problems.md").write_text("no markers\n"),
            "ocr_problems.md: missing marker",
        ),
        (lambda d: (d / "skills" / "Bad Name.md").write_text("x"), "missing marker"),
        (
            lambda d: (d / "skills" / "ocr_problems.md").write_bytes(b"ok\n\xff\n"),
            "ocr_problems.md:2: not valid UTF-8",
        ),
        (lambda d: shutil.rmtree(d / "skills"), "missing skills folder"),
        (
            lambda d: (shutil.rmtree(d / "skills"), (d / "skills").write_text("x")),
            "skills: is a file, not the skills folder",
        ),
    ],
)
def test_bad_bundles_name_the_file(bundle_dir: Path, damage, words: str) -> None:  # type: ignore[no-untyped-def]
    damage(bundle_dir)
    with pytest.raises(SkillError) as info:
        Bundle.load(bundle_dir)
    assert words in str(info.value)


def test_bad_slug_is_refused(default_bundle: Bundle) -> None:
    doc = default_bundle.skill("ocr_problems")
    with pytest.raises(SkillError, match="not a task-type slug"):
        Bundle(default_bundle.system_prompt, {"Bad Name": doc}, default_bundle.tools)


@settings(max_examples=100, deadline=None)
@given(
    desc=st.text(
        st.characters(blacklist_categories=("Cs",)) | st.sampled_from(["\n", "\x85", "\u2028", " ", "\r"]),
        min_size=1,
        max_size=30,
    ).filter(lambda s: s.strip() and "<!--" not in s)
)
def test_tool_descriptions_round_trip_through_yaml(
    tmp_path_factory: pytest.TempPathFactory, default_bundle: Bundle, desc: str
) -> None:
    tools = {**default_bundle.tools, "get_frames": desc}
    bundle = Bundle(default_bundle.system_prompt, {}, tools)
    folder = tmp_path_factory.mktemp("b")
    bundle.save(folder)
    assert Bundle.load(folder).tools["get_frames"] == desc
    assert content_hash({"x": desc}) == content_hash({"x": desc})


def test_hash_scheme_is_pinned() -> None:
    """BaselineCache keys on these hashes: an accidental change of the encoding must fail here."""
    doc = SkillDocument.author("Look closely.\n", "Answer with one letter.\n")
    tools = dict.fromkeys(AGENT_TOOL_NAMES, "A tool.")
    bundle = Bundle("You answer questions.\n", {"ocr_problems": doc}, tools)
    assert canonical_bytes({"b": [1, "é"], "a": None}) == '{"a":null,"b":[1,"é"]}'.encode()
    assert bundle.bundle_hash == "c682e28958f0ec3a839235e8aae3d15a9bfa250d1e2b504b5a3b7da9c194ac6e"
    assert bundle.relevant_hash("OCR Problems") == (
        "24d6a03f6bdf6569ec6f2d6889398c208e6789bf0d54c37300ae395d0c4fd647"
    )
    # The documented recipe, recomputed by hand: sha256 over sorted, compact, UTF-8 JSON.
    by_hand = {
        "scheme": "skillharness.relevant/1",
        "system": "You answer questions.\n",
        "skill": {"slug": "ocr_problems", "text": doc.render()},
        "tools": tools,
    }
    encoded = json.dumps(by_hand, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode()
    assert hashlib.sha256(encoded).hexdigest() == bundle.relevant_hash("ocr_problems")


def test_bundle_copies_and_pickles(default_bundle: Bundle) -> None:
    for clone in (copy.deepcopy(default_bundle), pickle.loads(pickle.dumps(default_bundle))):
        assert clone == default_bundle
        assert clone.bundle_hash == default_bundle.bundle_hash


def test_a_skill_target_reaches_its_own_class_and_the_others_reach_every_class() -> None:
    skill = EditTarget.skill("Counting Problem")
    assert skill.reaches("Counting Problem")
    assert not skill.reaches("OCR Problems")
    for everywhere in (EditTarget.system(), EditTarget.tool("get_frames")):
        assert everywhere.reaches("Counting Problem")
        assert everywhere.reaches("OCR Problems")
    assert EditTarget.parse(skill.label()).reaches("Counting Problem")
