"""Subtitles: Video-MME's <font> wrappers, overlapping lines, missing and malformed files."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillharness.errors import DataError
from skillharness.video import SubtitleLine, load_subtitles

VIDEOMME_STYLE = """\
1
00:00:01,000 --> 00:00:04,000
<font color="white" size=".72c">Welcome to the <i>kitchen</i></font>

2
00:00:03,500 --> 00:00:06,000
<font color="#FFFF00">Today we bake</font>
<font color="#FFFF00">a lemon cake</font>

3
00:00:10,000 --> 00:00:12,500
{\\an8}<b>First</b>, the flour.
"""


def _write(tmp_path: Path, text: str, name: str = "video.srt") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_font_and_other_tags_are_stripped(tmp_path: Path) -> None:
    subs = load_subtitles(_write(tmp_path, VIDEOMME_STYLE))
    assert [line.text for line in subs.lines] == [
        "Welcome to the kitchen",
        "Today we bake a lemon cake",
        "First, the flour.",
    ]
    assert subs.lines[0] == SubtitleLine(1.0, 4.0, "Welcome to the kitchen")


def test_overlapping_lines_are_all_found(tmp_path: Path) -> None:
    subs = load_subtitles(_write(tmp_path, VIDEOMME_STYLE))
    assert [line.start_s for line in subs.overlapping(3.6, 3.8)] == [1.0, 3.5]
    assert [line.start_s for line in subs.overlapping(0.0, 100.0)] == [1.0, 3.5, 10.0]
    assert subs.overlapping(6.5, 9.5) == ()
    assert [line.start_s for line in subs.nearest([3.7])] == [1.0, 3.5]


def test_nearest_follows_the_videomme_rule_and_optional_tolerance(tmp_path: Path) -> None:
    subs = load_subtitles(_write(tmp_path, VIDEOMME_STYLE))
    # Video-MME rule: only the lines on screen at the sampled times; duplicates collapse.
    assert [line.start_s for line in subs.nearest([2.0, 2.5, 8.0, 11.0])] == [1.0, 10.0]
    assert [line.start_s for line in subs.nearest([8.5], max_gap_s=2.0)] == [10.0]
    assert subs.nearest([20.0], max_gap_s=2.0) == ()
    assert [line.start_s for line in subs.nearest([20.0], max_gap_s=math.inf)] == [10.0]


def test_missing_file_is_empty_not_an_error(tmp_path: Path) -> None:
    subs = load_subtitles(tmp_path / "absent.srt")
    assert not subs
    assert subs.lines == ()
    assert subs.overlapping(0, 100) == ()
    assert subs.nearest([1.0, 2.0], max_gap_s=math.inf) == ()
    assert load_subtitles(None).lines == ()


@pytest.mark.parametrize(
    ("text", "line", "why"),
    [
        ("1\n00:00:01,000 -> 00:00:02,000\nhi\n", 2, "bad timing line"),
        ("1\n00:00:01,000 --> 00:00:0x,000\nhi\n", 2, "bad timing line"),
        ("1\n00:00:05,000 --> 00:00:02,000\nhi\n", 2, "ends"),
        ("hello there\nnot subtitles\n", 1, "expected a cue number"),
        (
            "1\n00:00:01,000 --> 00:00:02,000\nhi\n2\n00:00:03,000 --> 00:00:04,000\nyo\n",
            5,
            "missing blank line",
        ),
    ],
    ids=["arrow", "digits", "backwards", "not-srt", "no-blank-line"],
)
def test_malformed_file_names_the_file_and_line(tmp_path: Path, text: str, line: int, why: str) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(DataError, match=why) as info:
        load_subtitles(path)
    assert f"{path}:{line}:" in str(info.value)
    assert info.value.context == {"file": str(path), "line": line}


def test_non_utf8_file_is_an_error_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "latin.srt"
    path.write_bytes(b"1\n00:00:01,000 --> 00:00:02,000\ncaf\xe9\n")
    with pytest.raises(DataError, match="not UTF-8") as info:
        load_subtitles(path)
    assert str(path) in str(info.value)


def test_blank_line_inside_a_cue_continues_it(tmp_path: Path) -> None:
    subs = load_subtitles(_write(tmp_path, "1\n00:00:01,000 --> 00:00:02,000\nfirst part\n\nsecond part\n"))
    assert [line.text for line in subs.lines] == ["first part second part"]


def test_other_formats_are_read_with_pysubs2(tmp_path: Path) -> None:
    vtt = "WEBVTT\n\n00:00:01.000 --> 00:00:02.500\n<i>Hello</i> world\n"
    subs = load_subtitles(_write(tmp_path, vtt, "video.vtt"))
    assert subs.lines == (SubtitleLine(1.0, 2.5, "Hello world"),)


_words = st.text(alphabet="abcdefghij KLMNOP,.!?", min_size=1, max_size=30).filter(lambda s: s.strip())


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 10_000_000), st.integers(0, 100_000), _words), min_size=1, max_size=8)
)
def test_srt_round_trip(tmp_path_factory: pytest.TempPathFactory, cues: list[tuple[int, int, str]]) -> None:
    def stamp(ms: int) -> str:
        return f"{ms // 3_600_000:02d}:{ms // 60_000 % 60:02d}:{ms // 1000 % 60:02d},{ms % 1000:03d}"

    blocks = [
        f'{i}\n{stamp(s)} --> {stamp(s + d)}\n<font color="white">{text}</font>\n'
        for i, (s, d, text) in enumerate(cues, start=1)
    ]
    path = tmp_path_factory.mktemp("srt") / "x.srt"
    path.write_text("\n".join(blocks), encoding="utf-8")
    lines = load_subtitles(path).lines
    expected = sorted(
        ((s / 1000, (s + d) / 1000, " ".join(t.split())) for s, d, t in cues), key=lambda c: c[:2]
    )
    assert [(x.start_s, x.end_s, x.text) for x in lines] == expected


def test_locating_videos_and_subtitles(tmp_path: Path) -> None:
    from skillharness.video import locate_subtitles, locate_video

    (tmp_path / "v").mkdir()
    (tmp_path / "v" / "abc.webm").write_bytes(b"x")
    (tmp_path / "v" / "abc.mp4").write_bytes(b"x")
    assert locate_video(tmp_path / "v", "abc") == tmp_path / "v" / "abc.mp4"
    with pytest.raises(DataError, match=r"no video for 'zzz'.*zzz\.mkv"):
        locate_video(tmp_path / "v", "zzz")
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "abc.srt").write_text("")
    assert locate_subtitles(tmp_path / "s", "abc") == tmp_path / "s" / "abc.srt"
    assert locate_subtitles(tmp_path / "s", "zzz") is None
    assert locate_subtitles(None, "abc") is None
    assert load_subtitles(locate_subtitles(tmp_path / "s", "abc")).lines == ()
