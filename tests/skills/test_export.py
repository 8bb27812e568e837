"""``bundle export``'s formats read back from real files: JSON, the Agent Skills folder, the prompt."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from skillharness import __version__
from skillharness.data.questions import VIDEO_MME, slugify
from skillharness.skills import (
    Bundle,
    EditRecord,
    EditTarget,
    ExportError,
    ExportFormat,
    MomentumUpdate,
    SkillDocument,
    SkillFile,
    VersionReason,
    Workspace,
    export_bundle,
    load_export_source,
    load_json_export,
    read_skills_folder,
    skill_name,
)
from skillharness.skills.agent_skills import parse_skill_file
from skillharness.skills.export import SYSTEM_SKILL, task_type_names
from skillharness.util.atomic import new_mode

# The published rules (https://agentskills.io/specification), written out again here rather than
# imported, so the tests do not check the code against itself.
_SPEC_NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


def _valid_by_spec(name: str) -> bool:
    return 1 <= len(name) <= 64 and _SPEC_NAME.match(name) is not None and "--" not in name


@pytest.fixture
def trained(default_bundle: Bundle) -> Bundle:
    """A bundle as training leaves it: momentum written, non-ASCII text, CRLF lines in a body and
    blank lines at a document's end (which a trimmed export would lose)."""
    bundle = default_bundle.with_momentum("OCR Problems", MomentumUpdate.sanitized("Zoom on glyphs: é ≠ e."))
    doc = bundle.skill("Counting Problem")
    tail = doc.render()[len(doc.body) :] + "\n\n"
    crlf = SkillDocument.parse("# Counting Problem\r\nCount twice.\r\n" + tail)
    skills = {**bundle.skills, "counting_problem": crlf}
    return Bundle(bundle.system_prompt, skills, bundle.tools)


def _names(bundle: Bundle) -> dict[str, str]:
    return task_type_names(bundle, VIDEO_MME.task_types)


def test_json_export_loads_back_to_the_same_bundle(tmp_path: Path, trained: Bundle) -> None:
    out = tmp_path / "bundle.json"
    export_bundle(trained, ExportFormat.JSON, out, known=VIDEO_MME.task_types)
    loaded = load_json_export(out)
    assert loaded == trained
    assert loaded.bundle_hash == trained.bundle_hash
    assert loaded.skill("OCR Problems").momentum == "Zoom on glyphs: é ≠ e.\n"
    assert loaded.skill("Counting Problem").render() == trained.skill("Counting Problem").render()

    doc = json.loads(out.read_bytes())
    assert doc["bundle_hash"] == trained.bundle_hash
    assert doc["skillharness_version"] == __version__
    assert doc["skills"]["ocr_problems"]["task_type"] == "OCR Problems"
    for slug, skill in doc["skills"].items():
        assert skill["sha256"] == hashlib.sha256(skill["text"].encode("utf-8")).hexdigest()
        assert skill["relevant_hash"] == trained.relevant_hash(slug)
    # The sha256 of a text is the sha256 of its file in the bundle folder.
    files = trained.files()
    assert doc["system"]["sha256"] == hashlib.sha256(files["system.md"]).hexdigest()
    ocr_file = files["skills/ocr_problems.md"]
    assert doc["skills"]["ocr_problems"]["sha256"] == hashlib.sha256(ocr_file).hexdigest()
    assert set(doc["tools"]) == set(trained.tools)


def test_an_edited_json_export_is_refused_naming_the_entry(tmp_path: Path, default_bundle: Bundle) -> None:
    out = tmp_path / "bundle.json"
    export_bundle(default_bundle, ExportFormat.JSON, out)
    doc = json.loads(out.read_bytes())
    doc["skills"]["ocr_problems"]["text"] = doc["skills"]["ocr_problems"]["text"].replace("glyph", "glif")
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(doc))
    with pytest.raises(ExportError, match=r"edited\.json: skills\.ocr_problems: sha256"):
        load_json_export(edited)

    doc = json.loads(out.read_bytes())
    doc["bundle_hash"] = "0" * 64
    edited.write_text(json.dumps(doc))
    with pytest.raises(ExportError, match="the export records 000000000000"):
        load_json_export(edited)

    (tmp_path / "other.json").write_text('{"hello": 1}')
    with pytest.raises(ExportError, match=r"other\.json: not a skillharness bundle export"):
        load_json_export(tmp_path / "other.json")


def _front_matter(path: Path) -> tuple[dict[str, object], str]:
    """Split a SKILL.md by hand (not with the module under test): YAML between '---' lines, body."""
    text = path.read_bytes().decode("utf-8")
    assert text.startswith("---\n")
    front, _, body = text[4:].partition("\n---\n")
    return yaml.safe_load(front), body


def test_skills_folder_parses_back_to_the_same_texts(tmp_path: Path, trained: Bundle) -> None:
    out = tmp_path / "skills"
    export_bundle(trained, ExportFormat.SKILLS, out, known=VIDEO_MME.task_types)
    # Readable as a plain mkdir and open would leave it, not mkdtemp's 0700 and mkstemp's 0600.
    assert out.stat().st_mode & 0o777 == new_mode(folder=True)
    assert (out / "README.md").stat().st_mode & 0o777 == new_mode()
    names = _names(trained)
    assert sorted(p.name for p in out.iterdir()) == sorted(
        ["README.md", SYSTEM_SKILL, *(skill_name(n) for n in names.values())]
    )
    parsed = read_skills_folder(out)
    for slug, doc in trained.skills.items():
        name = skill_name(names[slug])
        front, body = _front_matter(out / name / "SKILL.md")
        assert _valid_by_spec(name)
        assert front["name"] == name == parsed[name].name
        assert body == doc.render() == parsed[name].body  # as the agent sees it, markers and all
        description = front["description"]
        assert isinstance(description, str)
        assert 1 <= len(description) <= 1024
        assert f"task type {names[slug]}" in description
        assert front["metadata"] == {
            "skillharness-task-type": names[slug],
            "skillharness-slug": slug,
            "skillharness-sha256": hashlib.sha256(doc.render().encode("utf-8")).hexdigest(),
            "skillharness-bundle-hash": trained.bundle_hash,
        }
    system = parsed[SYSTEM_SKILL]
    assert system.body.startswith(trained.system_prompt)
    for task_type in names.values():
        assert f"For questions of task type {task_type}, follow the skill `{skill_name(task_type)}`." in (
            system.body
        )
    for description in trained.tools.values():
        assert description.strip() in system.body
    assert "ocr-problems" in (out / "README.md").read_text()


def test_prompt_holds_every_skill_verbatim_under_its_routing_line(tmp_path: Path, trained: Bundle) -> None:
    out = tmp_path / "prompt.md"
    export_bundle(trained, ExportFormat.PROMPT, out, known=VIDEO_MME.task_types)
    text = out.read_bytes().decode("utf-8")
    assert text.startswith(trained.system_prompt)
    for slug, task_type in _names(trained).items():
        routing = f"For questions of task type {task_type}, follow:\n\n"
        assert routing + trained.skills[slug].render() in text
    for name, description in trained.tools.items():
        assert f"## {name}\n\n{description.strip()}\n" in text
    again = tmp_path / "again.md"
    export_bundle(trained, ExportFormat.PROMPT, again, known=VIDEO_MME.task_types)
    assert again.read_bytes() == out.read_bytes()


# Arbitrary text rarely slugs to more than 64 characters; the second alphabet often does.
_task_types = st.one_of(st.text(max_size=90), st.text(alphabet="abZ9 _-é.", max_size=150))


@given(_task_types)
def test_a_skill_name_is_valid_by_the_spec_or_a_clear_error(task_type: str) -> None:
    slug = slugify(task_type)
    if not slug or len(slug) > 64:
        with pytest.raises(ExportError) as caught:
            skill_name(task_type)
        assert repr(task_type) in str(caught.value)  # the message names the task type at fault
        assert caught.value.context["task_type"] == task_type
    else:
        name = skill_name(task_type)
        assert _valid_by_spec(name)
        assert name == slug.replace("_", "-")


# Characters YAML reads specially (NEL and the Unicode separators are line breaks to it).
_tricky = st.text(
    alphabet=st.sampled_from(
        ["\x85", "\u2028", "\ufeff", "\t", "\r", "\n", " ", ":", "'", '"', "-", "#", "é", "a"]
    )
)


@given(
    description=st.one_of(st.text(min_size=1, max_size=1024), _tricky).filter(
        lambda d: bool(d.strip()) and len(d) <= 1024
    ),
    task_type=st.one_of(st.text(), _tricky),
    body=st.one_of(st.text(), _tricky),
)
def test_a_skill_file_parses_back_whatever_its_texts(description: str, task_type: str, body: str) -> None:
    skill = SkillFile(name="ocr-problems", description=description, body=body, metadata={"t": task_type})
    assert parse_skill_file(skill.render(), "SKILL.md") == skill


def test_skill_names_of_examples() -> None:
    assert skill_name("OCR Problems") == "ocr-problems"
    assert skill_name("  Spatial   Reasoning! ") == "spatial-reasoning"
    assert skill_name("x" * 64) == "x" * 64
    with pytest.raises(ExportError, match="65 characters long, over the limit of 64"):
        skill_name("x" * 65)
    with pytest.raises(ExportError, match=r"task type '¿¡': .*it is empty"):
        skill_name("¿¡")


def test_a_skill_without_a_valid_name_is_refused_before_anything_is_written(
    tmp_path: Path, default_bundle: Bundle
) -> None:
    long_slug = "a" * 65
    doc = default_bundle.skill("OCR Problems")
    bundle = Bundle(default_bundle.system_prompt, {long_slug: doc}, default_bundle.tools)
    with pytest.raises(ExportError, match=f"task type '{long_slug}'"):
        export_bundle(bundle, ExportFormat.SKILLS, tmp_path / "out")
    assert list(tmp_path.iterdir()) == []

    clash = Bundle(default_bundle.system_prompt, {"video_qa_system": doc}, default_bundle.tools)
    with pytest.raises(ExportError, match="would take the name 'video-qa-system'"):
        export_bundle(clash, ExportFormat.SKILLS, tmp_path / "out")


def test_an_existing_out_needs_force_and_force_replaces_only_an_export(
    tmp_path: Path, default_bundle: Bundle, trained: Bundle
) -> None:
    out = tmp_path / "skills"
    export_bundle(default_bundle, ExportFormat.SKILLS, out)
    with pytest.raises(ExportError, match="already exists; pass --force"):
        export_bundle(trained, ExportFormat.SKILLS, out)
    export_bundle(trained, ExportFormat.SKILLS, out, force=True)
    assert read_skills_folder(out)["ocr-problems"].body == trained.skill("OCR Problems").render()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["skills"]  # no temp or old folder left

    (out / "notes.txt").write_text("mine")
    with pytest.raises(ExportError, match=r"holds 'notes\.txt', which no skills export writes"):
        export_bundle(trained, ExportFormat.SKILLS, out, force=True)
    with pytest.raises(ExportError, match="is a folder; this format writes a file"):
        export_bundle(trained, ExportFormat.JSON, out, force=True)

    prompt = tmp_path / "prompt.md"
    prompt.write_text("keep me")
    with pytest.raises(ExportError, match="already exists"):
        export_bundle(trained, ExportFormat.PROMPT, prompt)
    assert prompt.read_text() == "keep me"
    with pytest.raises(ExportError, match=r"prompt\.md/x\.md: .*prompt\.md is a file, not a folder"):
        export_bundle(trained, ExportFormat.PROMPT, prompt / "x.md")  # a file where a folder should be


def test_a_workspace_exports_its_current_version(
    tmp_path: Path, default_bundle: Bundle, trained: Bundle
) -> None:
    workspace = Workspace.create(tmp_path / "ws", default_bundle)
    record = EditRecord(target=EditTarget.system(), reason=VersionReason.MANUAL)
    version = workspace.commit(trained, "v0000", record)
    bundle, label = load_export_source(tmp_path / "ws")
    assert bundle == trained
    assert label == f"{tmp_path / 'ws'} ({version})"
    assert load_export_source(tmp_path / "ws" / "v0000")[0] == default_bundle

    (tmp_path / "empty").mkdir()
    with pytest.raises(ExportError, match=r"empty: not a bundle folder .* nor a workspace"):
        load_export_source(tmp_path / "empty")
