"""Skill documents: lossless regions, clear errors, and owner-only writers."""

from __future__ import annotations

import copy
import dataclasses
import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError
from skills_support import APPENDIX, BODY, MOMENTUM, SAMPLE, documents, region_text

from skillharness.errors import SkillError
from skillharness.skills import EditSet, MomentumUpdate, SkillDocument
from skillharness.skills.document import ensure_trailing_newline
from skillharness.skills.markers import APPENDIX_MARKER, MARKER_LIKE, MARKERS, MOMENTUM_MARKER


def test_regions_of_a_sample(sample_doc: SkillDocument) -> None:
    assert (sample_doc.body, sample_doc.momentum, sample_doc.appendix) == (BODY, MOMENTUM, APPENDIX)
    assert sample_doc.render() == SAMPLE
    assert sample_doc.body_end == len(BODY)


def test_crlf_and_missing_final_newline_round_trip() -> None:
    text = f"a\r\nb\r\n{MOMENTUM_MARKER}\r\nm\r\n{APPENDIX_MARKER}\r\nend without newline"
    doc = SkillDocument.parse(text)
    assert doc.render() == text
    assert doc.appendix == "end without newline"
    bare = f"{MOMENTUM_MARKER}\n{APPENDIX_MARKER}"
    assert SkillDocument.parse(bare).render() == bare
    assert SkillDocument.parse(bare).body == ""


@settings(max_examples=200, deadline=None)
@given(body=region_text, momentum=region_text, appendix=region_text)
def test_round_trip_property(body: str, momentum: str, appendix: str) -> None:
    doc = SkillDocument.author(body, appendix, momentum=momentum)
    text = doc.render()
    again = SkillDocument.parse(text)
    assert again == doc
    assert again.render() == text
    assert (again.body, again.momentum) == (doc.body, doc.momentum)
    assert again.appendix == appendix
    assert doc.body in (body, body + "\n")


@settings(max_examples=200, deadline=None)
@given(
    text=st.lists(
        st.sampled_from(["a", "\n", "\r\n", MOMENTUM_MARKER, APPENDIX_MARKER, "<!-- x"]), max_size=10
    ).map("".join)
)
def test_any_parseable_text_renders_back_byte_exact(text: str) -> None:
    try:
        doc = SkillDocument.parse(text)
    except SkillError:
        return
    assert doc.render() == text


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        (f"body\n{APPENDIX_MARKER}\nappendix\n", None, "missing marker"),
        (f"body\n{MOMENTUM_MARKER}\nm\n", None, "missing marker"),
        (f"body\n{MOMENTUM_MARKER}\nm\n{MOMENTUM_MARKER}\n{APPENDIX_MARKER}\n", 4, "duplicate"),
        (f"b\n{MOMENTUM_MARKER}\n{APPENDIX_MARKER}\nx\n{APPENDIX_MARKER}\n", 5, "duplicate"),
        (f"b\n{APPENDIX_MARKER}\nm\n{MOMENTUM_MARKER}\n", 4, "after the appendix"),
        (f"b\n  {MOMENTUM_MARKER}\n{MOMENTUM_MARKER}\n{APPENDIX_MARKER}\n", 2, "marker-like"),
        (f"b\n{MOMENTUM_MARKER}\n{APPENDIX_MARKER}\nsee <!--SKILLHARNESS: x\n", 4, "marker-like"),
        (f"{MOMENTUM_MARKER} trailing\n{MOMENTUM_MARKER}\n{APPENDIX_MARKER}\n", 1, "marker-like"),
    ],
)
def test_bad_markers_name_file_and_line(text: str, line: int | None, words: str) -> None:
    with pytest.raises(SkillError) as info:
        SkillDocument.parse(text, source="skills/ocr.md")
    message = str(info.value)
    assert "skills/ocr.md" in message
    assert words in message
    assert info.value.context["line"] == line
    if line is not None:
        assert f"skills/ocr.md:{line}:" in message


def test_marker_like_pattern_catches_both_markers_and_variants() -> None:
    for marker in MARKERS:
        assert MARKER_LIKE.search(marker)
    assert MARKER_LIKE.search("<!--   SkillHarness :appendix-->")
    assert not MARKER_LIKE.search("<!-- a comment -->")


def test_only_momentum_update_writes_momentum(sample_doc: SkillDocument) -> None:
    updated = sample_doc.with_momentum(MomentumUpdate(text="Guidance: check frames twice."))
    assert updated.momentum == "Guidance: check frames twice.\n"
    assert updated.body == sample_doc.body
    assert updated.appendix == sample_doc.appendix
    assert SkillDocument.parse(updated.render()) == updated
    assert sample_doc.momentum == MOMENTUM  # immutable: the original is untouched


def test_momentum_update_refuses_marker_like_text() -> None:
    with pytest.raises(ValidationError):
        MomentumUpdate(text=f"ok\n{APPENDIX_MARKER}\nforged appendix")


def test_appendix_is_unwritable_by_the_api(sample_doc: SkillDocument) -> None:
    # No setter, no field on the evolution object, no writer method: the wrong write cannot be said.
    with pytest.raises(AttributeError):
        sample_doc.appendix = "new"  # type: ignore[misc]
    with pytest.raises(AttributeError, match="immutable"):
        sample_doc._appendix = "new"  # type: ignore[misc]
    with pytest.raises(TypeError, match="parse"):
        SkillDocument(object(), ("b\n", "", "", "", "forged"), "x")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        dataclasses.replace(sample_doc, _appendix="forged")  # type: ignore[type-var]
    assert set(EditSet.model_fields) == {"skill_update_mode", "edits", "body", "rationale"}
    public_writers = [name for name in dir(SkillDocument) if name.startswith("with_")]
    assert public_writers == ["with_momentum"]
    assert set(MomentumUpdate.model_fields) == {"text"}


@settings(max_examples=100, deadline=None)
@given(doc=documents(), guidance=region_text)
def test_momentum_writes_keep_body_and_appendix(doc: SkillDocument, guidance: str) -> None:
    updated = doc.with_momentum(MomentumUpdate(text=guidance))
    assert (updated.body, updated.appendix) == (doc.body, doc.appendix)
    parsed = SkillDocument.parse(updated.render())
    assert parsed == updated
    assert parsed.render() == updated.render()
    assert parsed.momentum == updated.momentum == ensure_trailing_newline(guidance)


def test_copies_and_pickles_round_trip(sample_doc: SkillDocument) -> None:
    for clone in (copy.copy(sample_doc), copy.deepcopy(sample_doc), pickle.loads(pickle.dumps(sample_doc))):
        assert clone == sample_doc
        assert clone.render() == SAMPLE
        assert hash(clone) == hash(sample_doc)


@settings(max_examples=100, deadline=None)
@given(
    guidance=st.lists(st.sampled_from(["ok", "\n", APPENDIX_MARKER, "<!--", " skillharness", ":", "é"])).map(
        "".join
    )
)
def test_refuted_sanitized_momentum_never_carries_a_marker(guidance: str) -> None:
    update = MomentumUpdate.sanitized(guidance, max_chars=40)
    assert not MARKER_LIKE.search(update.text)
    assert len(update.text) <= 40


def test_momentum_guidance_with_a_lone_surrogate_cannot_break_the_bundle() -> None:
    # json.loads('"\\ud800"') yields a lone surrogate; stored, it would break every hash and save.
    update = MomentumUpdate.sanitized("check frames \ud800 twice")
    assert update.text == "check frames ? twice"
    update.text.encode("utf-8")
    with pytest.raises(ValidationError, match="not encodable"):
        MomentumUpdate(text="bad \ud800")


@pytest.mark.parametrize(
    "other",
    [
        SkillDocument.author("b\n", "A\n", momentum="m\n"),
        SkillDocument.author("a\n", "B\n", momentum="m\n"),
        SkillDocument.author("a\n", "A\n", momentum="n\n"),
        SkillDocument.author("a\n", "A\n"),
        SkillDocument.parse(f"a\r\n{MOMENTUM_MARKER}\r\nm\r\n{APPENDIX_MARKER}\r\nA\r\n"),
    ],
)
def test_documents_that_differ_anywhere_are_unequal(other: SkillDocument) -> None:
    doc = SkillDocument.author("a\n", "A\n", momentum="m\n")
    assert doc != other
    assert other != doc
    assert doc.render() != other.render()


def test_equal_documents_are_equal_whatever_their_source_and_never_equal_text() -> None:
    one = SkillDocument.author("a\n", "A\n", source="one.md")
    two = SkillDocument.parse(one.render(), source="two.md")
    assert one == two
    assert hash(one) == hash(two)
    assert one != one.render()
    assert len({one, two}) == 1


def test_author_terminates_body_and_momentum_but_not_the_appendix() -> None:
    doc = SkillDocument.author("body", "appendix", momentum="momentum")
    assert doc.render() == f"body\n{MOMENTUM_MARKER}\nmomentum\n{APPENDIX_MARKER}\nappendix"
    assert (doc.body, doc.momentum, doc.appendix, doc.body_end) == ("body\n", "momentum\n", "appendix", 5)
    empty = SkillDocument.author("", "")
    assert empty.render() == f"{MOMENTUM_MARKER}\n{APPENDIX_MARKER}\n"


def test_the_constructor_and_attributes_are_closed(sample_doc: SkillDocument) -> None:
    with pytest.raises(TypeError, match=r"SkillDocument\.parse"):
        SkillDocument(object(), ("", "", "", "", ""), "x")
    with pytest.raises(AttributeError, match="cannot set 'source'"):
        sample_doc.source = "y"  # type: ignore[misc]
    with pytest.raises(AttributeError, match="cannot delete '_body'"):
        del sample_doc._body
    assert (
        repr(sample_doc) == f"SkillDocument(source='sample.md', body={len(BODY)}, "
        f"momentum={len(MOMENTUM)}, appendix={len(APPENDIX)} chars)"
    )


def test_with_momentum_replaces_only_momentum_and_terminates_it(sample_doc: SkillDocument) -> None:
    updated = sample_doc.with_momentum(MomentumUpdate(text="Zoom out."))
    assert updated.render() == f"{BODY}{MOMENTUM_MARKER}\nZoom out.\n{APPENDIX_MARKER}\n{APPENDIX}"
    assert updated.source == sample_doc.source
    cleared = sample_doc.with_momentum(MomentumUpdate(text=""))
    assert cleared.momentum == ""


@pytest.mark.parametrize(
    ("guidance", "max_chars", "expected"),
    [
        ("  keep this  \n", 2000, "keep this"),
        (f"one\n{MOMENTUM_MARKER}\ntwo", 2000, "one\ntwo"),
        ("abcdef   ghij", 9, "abcdef"),  # capped, then trailing space trimmed
        ("<!--\nskillharness:x -->", 2000, "x -->"),  # a marker formed across the join is removed
    ],
)
def test_sanitized_guidance_examples(guidance: str, max_chars: int, expected: str) -> None:
    assert MomentumUpdate.sanitized(guidance, max_chars=max_chars).text == expected


def test_sanitized_guidance_defaults_to_2000_characters() -> None:
    assert len(MomentumUpdate.sanitized("y" * 5000).text) == 2000


def test_a_marker_in_momentum_text_is_refused_by_the_model() -> None:
    with pytest.raises(ValidationError, match="marker-like"):
        MomentumUpdate(text=f"x {APPENDIX_MARKER}")


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        (f"a\n{MOMENTUM_MARKER}\nb\n{MOMENTUM_MARKER}\n{APPENDIX_MARKER}\n", 4, "first at line 2"),
        (f"{APPENDIX_MARKER}\nb\n{MOMENTUM_MARKER}\n", 3, "after the appendix marker (line 1)"),
        (f"a\nb\n{MOMENTUM_MARKER}\n", None, "searched lines 1-4"),
    ],
)
def test_marker_errors_name_the_lines(text: str, line: int | None, words: str) -> None:
    with pytest.raises(SkillError, match=words.replace("(", r"\(").replace(")", r"\)")) as info:
        SkillDocument.parse(text, source="s.md")
    assert info.value.context["line"] == line
    assert info.value.context["file"] == "s.md"


def test_a_marker_error_counts_a_leading_empty_line() -> None:
    with pytest.raises(SkillError, match=r"s\.md:3: momentum marker after the appendix marker \(line 2\)"):
        SkillDocument.parse(f"\n{APPENDIX_MARKER}\n{MOMENTUM_MARKER}\n", source="s.md")


def test_the_private_body_writer_refuses_a_marker_itself(sample_doc: SkillDocument) -> None:
    # skills.patch refuses such a body first; the writer checks again so no other caller can slip.
    with pytest.raises(SkillError, match=r"sample\.md: refusing a body containing a marker-like sequence"):
        sample_doc._with_body(f"x\n{APPENDIX_MARKER}\n")
    assert sample_doc._with_body("new").body == "new\n"
