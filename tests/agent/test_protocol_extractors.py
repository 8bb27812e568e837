"""Each reference protocol reads a reply with its pinned version's own extractor.

``fixtures/protocols/extract_cases.json`` holds, for tricky replies, the letter each upstream
function returned when run at the pinned commit (lmms-eval v0.7.2 with its default reasoning-tag
stripping; VLMEvalKit main under ``exact_matching``, where "Z" means "read nothing, scored
wrong"; the official script the Video-MME README links). ``tests/upstream_oracles.py`` restates
the same logic; a randomized comparison checks ours against it beyond the fixed cases.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from skillharness.agent.protocols import (
    REFERENCE_EXTRACTORS,
    ProtocolName,
    lmms_eval_letter,
    official_letter,
    vlmevalkit_letter,
)
from upstream_oracles import lmms_eval_extract, official_extract, vlmevalkit_extract

CASES = json.loads((Path(__file__).parent / "fixtures/protocols/extract_cases.json").read_text("utf-8"))


def _vlm(text: str) -> str:
    return vlmevalkit_letter(text) or "Z"  # VLMEvalKit's exact_matching records no letter as "Z"


def test_fixture_holds_at_least_40_tricky_replies_where_the_references_disagree() -> None:
    assert len(CASES) >= 40
    assert sum(c["lmms_eval"] != c["official"] for c in CASES) >= 10
    assert sum(c["vlmevalkit"] == "Z" for c in CASES) >= 5  # unread replies, scored wrong


@pytest.mark.parametrize("case", CASES, ids=range(len(CASES)))
def test_lmms_eval_reads_like_lmms_eval_v072(case: dict[str, str]) -> None:
    assert lmms_eval_letter(case["response"]) == case["lmms_eval"]


@pytest.mark.parametrize("case", CASES, ids=range(len(CASES)))
def test_vlmevalkit_reads_like_vlmevalkit_main(case: dict[str, str]) -> None:
    assert _vlm(case["response"]) == case["vlmevalkit"]


@pytest.mark.parametrize("case", CASES, ids=range(len(CASES)))
def test_official_reads_like_the_linked_script(case: dict[str, str]) -> None:
    assert official_letter(case["response"]) == case["official"]


def test_issue_examples() -> None:
    # lmms-eval's ranked extractor reads the answer, not the first capital.
    for text, letter in [
        ("Answer: D", "D"),
        ("Best answer: D", "D"),
        ("Final Answer: B", "B"),
        ("<think>Option A looks plausible but B fits better.</think>\nB", "B"),
    ]:
        assert lmms_eval_letter(text) == letter
    # VLMEvalKit and the linked script strip "Answer:"; its joined literals still miss "Best answer:".
    assert vlmevalkit_letter("Answer: C") == official_letter("Answer: C") == "C"
    assert vlmevalkit_letter("Best answer: D") == "B"
    assert official_letter("The correct option: D") == "D"


def test_extractor_map_names_each_protocol() -> None:
    assert {
        ProtocolName.LMMS_EVAL: lmms_eval_letter,
        ProtocolName.VLMEVALKIT: vlmevalkit_letter,
        ProtocolName.OFFICIAL: official_letter,
    } == REFERENCE_EXTRACTORS


_TOKENS = [
    "A", "B", "C", "D", "E", "(A)", "(B)", "C.", "D:", "B)", "a", "the answer is", "Answer:",
    "Option:", "Best answer:", "The correct option", "<think>", "</think>", "<analysis>",
    "</analysis>", " ", "\n", ".", ",", "?", "'", "word", "Berries", "I choose", "答案是", "**",
]  # fmt: skip


def test_randomized_replies_match_the_retyped_references() -> None:
    draw = random.Random(7)
    for _ in range(3000):
        text = "".join(draw.choice(_TOKENS) + draw.choice(["", " "]) for _ in range(draw.randint(0, 12)))
        assert lmms_eval_letter(text) == lmms_eval_extract(text), text
        assert _vlm(text) == vlmevalkit_extract(text), text
        assert official_letter(text) == official_extract(text), text


def test_oracles_agree_with_the_captured_letters() -> None:
    for case in CASES:
        text = case["response"]
        assert (lmms_eval_extract(text), vlmevalkit_extract(text), official_extract(text)) == (
            case["lmms_eval"],
            case["vlmevalkit"],
            case["official"],
        ), text
