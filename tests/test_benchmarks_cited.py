"""Every results file docs/benchmarks.md cites by name is in benchmarks/results: a figure whose
file is gone could no longer be checked against what it was read from."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
# A results file named in backticks, with or without its folder, braces for alternatives
# (`issue48-auto-r{0,06,1}-32k.json`); templates (`<row>`) and globs are not names.
CITED = re.compile(r"`(?:benchmarks/results/)?((?:issue4\d|simlab|gepa|aa-check)[\w{},.-]*\.json)`")


def expand(name: str) -> list[str]:
    """The names a brace pattern stands for, left to right (`a{,-s5}.json`: a.json, a-s5.json)."""
    match = re.search(r"\{([^{}]*)\}", name)
    if match is None:
        return [name]
    head, tail = name[: match.start()], name[match.end() :]
    return [n for alt in match.group(1).split(",") for n in expand(head + alt + tail)]


def test_expand_reads_every_alternative_of_every_brace() -> None:
    assert expand("a-r{0,1}{,-s5}.json") == ["a-r0.json", "a-r0-s5.json", "a-r1.json", "a-r1-s5.json"]
    assert expand("plain.json") == ["plain.json"]


def test_every_results_file_the_benchmarks_doc_cites_is_there() -> None:
    text = (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    cited = sorted({n for m in CITED.finditer(text) for n in expand(m.group(1))})
    assert len(cited) > 40  # the pattern still finds the doc's citations
    missing = [n for n in cited if not (RESULTS / n).is_file()]
    assert missing == [], f"docs/benchmarks.md cites results files that benchmarks/results lacks: {missing}"
