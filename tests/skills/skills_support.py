"""Shared constants and hypothesis strategies for the skills tests."""

from __future__ import annotations

from hypothesis import strategies as st

from skillharness.skills import Edit, EditOp, EditSet, Refusal, RefusalReason, SkillDocument
from skillharness.skills.markers import APPENDIX_MARKER, MARKER_LIKE, MOMENTUM_MARKER

BODY = "# OCR\n\nRead the text.\nCount twice.\nUnique line here.\n"
MOMENTUM = "Momentum says: zoom in.\n"
APPENDIX = "## Answer\nSubmit one letter.\n"
SAMPLE = f"{BODY}{MOMENTUM_MARKER}\n{MOMENTUM}{APPENDIX_MARKER}\n{APPENDIX}"

# A small alphabet makes anchors collide, cross boundaries and repeat often, which is what the
# properties need to exercise; the marker fragments let generated text *almost* form a marker.
_ALPHABET = st.sampled_from(
    ["a", "b", " ", "\n", "\r", "<!--", " skillharness", ":", "é", "x\n", "Zoom", "count", "1", "2", "-->"]
)
region_text = st.lists(_ALPHABET, max_size=16).map("".join).filter(lambda t: not MARKER_LIKE.search(t))
_body_text = (
    st.lists(_ALPHABET, min_size=4, max_size=24).map("".join).filter(lambda t: not MARKER_LIKE.search(t))
)


@st.composite
def documents(draw: st.DrawFn) -> SkillDocument:
    """A valid document with small, collision-prone regions."""
    body = draw(st.one_of(_body_text, _body_text, _body_text, region_text))
    return SkillDocument.author(body, draw(region_text), momentum=draw(region_text))


@st.composite
def edit_sets(draw: st.DrawFn, document: SkillDocument) -> EditSet:
    """An edit set whose anchors are mostly substrings of the whole rendered document."""
    text = document.render()

    def anchor() -> str:
        # Mostly substrings of the body (applicable), else of the whole document (crossing
        # boundaries, in frozen regions), else fixed troublemakers.
        kind = draw(st.sampled_from(["body", "body", "document", "fixed"]))
        source = document.body if kind == "body" else text
        if kind != "fixed" and source:
            start = draw(st.integers(0, len(source) - 1))
            return source[start : start + draw(st.integers(4, 40))]
        return draw(st.sampled_from(["a", "b", "\n", MOMENTUM_MARKER, APPENDIX_MARKER, "zzz", ""]))

    edits = tuple(
        Edit(
            op=draw(st.sampled_from(list(EditOp))),
            anchor=anchor(),
            text=draw(st.one_of(region_text, _ALPHABET)),
        )
        for _ in range(draw(st.integers(1, 3)))
    )
    mode = "rewrite" if draw(st.integers(0, 5)) == 5 else "patch"
    body = draw(st.one_of(st.none(), region_text, st.just(f"x\n{MOMENTUM_MARKER}\n")))
    return EditSet(skill_update_mode=mode, edits=edits, body=body, rationale="r")


def patch(*edits: tuple[str, str, str]) -> EditSet:
    return EditSet(
        skill_update_mode="patch",
        edits=tuple(Edit(op=EditOp(op), anchor=anchor, text=text) for op, anchor, text in edits),
        rationale="test",
    )


def refused(result: object, reason: RefusalReason) -> Refusal:
    assert isinstance(result, Refusal), result
    assert result.reason is reason, result
    return result
