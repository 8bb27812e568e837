"""Subtitle parsing edges: entities, nested tags, text that looks like markup or an arrow, BOM, CRLF."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillharness.errors import DataError
from skillharness.video.subtitles import clean_text, load_subtitles


def _srt(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "v.srt"
    path.write_bytes(text.encode("utf-8"))
    return path


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ('<font color="#ffffff"><font size="2">Tom &amp; Jerry</font></font>', "Tom & Jerry"),
        ("it&#39;s &quot;ok&quot;", 'it\'s "ok"'),
        ("hello&nbsp;world", "hello world"),
        ("&lt;font&gt; is a tag", "<font> is a tag"),
        ("if a<b and c>d then", "if a<b and c>d then"),
        ("<font color=#fff size=2>x</font> <i>y</i><br/>z", "x yz"),
    ],
)
def test_clean_text_decodes_entities_and_strips_only_real_tags(raw: str, clean: str) -> None:
    assert clean_text(raw) == clean


def test_bom_crlf_overlap_and_no_trailing_blank_line(tmp_path: Path) -> None:
    text = (
        '\ufeff1\r\n00:00:00,500 --> 00:00:02,000\r\n<font color="#fff">Tom &amp; Jerry</font>\r\n\r\n'
        "2\r\n00:00:01,000 --> 00:00:03,000\r\noverlapping\r\n\r\n"
        "3\r\n00:00:04,000 --> 00:00:05,000\r\nlast, no blank line after"
    )
    subs = load_subtitles(_srt(tmp_path, text))
    assert [line.text for line in subs.lines] == ["Tom & Jerry", "overlapping", "last, no blank line after"]
    assert [line.text for line in subs.nearest([1.5])] == ["Tom & Jerry", "overlapping"]


def test_an_arrow_inside_a_cue_text_is_text(tmp_path: Path) -> None:
    subs = load_subtitles(_srt(tmp_path, "1\n00:00:00,000 --> 00:00:01,000\nLondon --> Paris\n"))
    assert [line.text for line in subs.lines] == ["London --> Paris"]


def test_a_missing_blank_line_between_cues_is_still_named(tmp_path: Path) -> None:
    text = "1\n00:00:00,000 --> 00:00:01,000\nhello\n00:00:01,000 --> 00:00:02,000\nworld\n"
    with pytest.raises(DataError, match=r"v\.srt:4: .*timing line"):
        load_subtitles(_srt(tmp_path, text))
