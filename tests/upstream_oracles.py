"""Re-typed copies of the reference scorers' logic, kept only as test oracles.

Each function restates, step by step, what the pinned upstream code does (versions and paths in
docs/protocols.md), so a test can check our implementation against it on many inputs:

- ``lmms_eval_extract``: lmms-eval v0.7.2 ``strip_reasoning_tags`` (default tags) followed by
  ``extract_mcq_answer(s, choices=["A", "B", "C", "D"])``.
- ``vlmevalkit_extract``: VLMEvalKit ``VideoMME.evaluate`` under ``exact_matching``: its
  ``extract_characters_regex``, and when that is empty ``can_infer`` with no choices, else "Z".
- ``official_extract`` / ``official_read``: ``eval_your_results.py`` of ``thanku-all/parse_answer``
  (the script the Video-MME README links): its extractor, and its reading of a results file.
- ``mvbench_aggregate``, ``mlvu_dev_aggregate``, ``videomme_v2_overall_score``: lmms-eval
  v0.7.2's ``mvbench_aggregate_results``, ``mlvu_aggregate_results_dev`` and the
  ``overall_score`` of ``_compute_all_subscores`` with ``cal_relevance`` / ``cal_logic``, on the
  dictionaries their ``process_results`` return.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from typing import Any

_PREFIXES_VLM = [
    "The best answer is",
    "The correct answer is",
    "The answer is",
    "The answer",
    "The best option isThe correct option is",
    "Best answer:Best option:",
    "Answer:",
    "Option:",
]
_PREFIXES_OFFICIAL = [*_PREFIXES_VLM, "The correct answer", "The correct option"]


def _regex_extract(s: str, prefixes: list[str]) -> str:
    s = s.strip()
    for prefix in prefixes:
        s = s.replace(prefix, "")
    if len(s.split()) > 10 and not re.search("[ABCD]", s):
        return ""
    found = re.search(r"[ABCD]", s)
    return "" if found is None else found[0]


def official_extract(s: str) -> str:
    return _regex_extract(s, _PREFIXES_OFFICIAL)


def _can_infer_no_choices(answer: str) -> str | bool:
    # can_infer_option with an empty choice dict: only the "Z"/"" token check can answer.
    if "Failed to obtain answer via API" in answer:
        return False
    for refusal in (
        "Sorry, I can't help with images of people yet.",
        "I can't process this file.",
        "I'm sorry, but without the image provided",
        "Cannot determine the answer",
    ):
        if refusal in answer:
            return "Z"
    mod = answer
    for c in ".()[],:;!*#{}":
        mod = mod.replace(c, " ")
    splits = [x.strip() for x in mod.split()]
    if sum(c in splits for c in {"Z", ""}) == 1:
        return "Z"
    # can_infer_text with no choices: a non-empty answer is longer than twice nothing.
    return False


def vlmevalkit_extract(s: str) -> str:
    got = _regex_extract(s, _PREFIXES_VLM)
    if got:
        return got
    return _can_infer_no_choices(s) or "Z"


_TAGS = [["<think>", "</think>"], ["<analysis>", "</analysis>"]]
_PHRASES = [
    "the answer is", "answer is", "the correct answer is", "correct answer is",
    "the best answer is", "best answer is", "the correct option is", "correct option is",
    "the best option is", "best option is", "the choice is", "choice is",
    "the correct choice is", "correct choice is", "i choose", "i select", "i pick",
    "my answer is", "my choice is", "옵션", "정답은", "답은", "답:", "答案是", "答案为", "选", "答えは",
]  # fmt: skip
_PRIORITY = {"start": 10, "end": 9, "phrase": 7, "parentheses": 6, "period": 5, "colon": 4}
_PRIORITY |= {"right_paren": 3, "space": 2, "fallback": 0}


def _strip_tags(text: str) -> str:
    result = text
    for start_tag, end_tag in _TAGS:
        while start_tag in result and end_tag in result:
            start = result.find(start_tag)
            end = result.find(end_tag, start)
            if start != -1 and end != -1:
                result = result[:start] + result[end + len(end_tag) :]
            else:
                break
        if end_tag in result and start_tag not in result:
            result = result.rsplit(end_tag, 1)[-1]
    return result.strip()


def lmms_eval_extract(response: str) -> str:
    response = _strip_tags(response)
    if not response or not response.strip():
        return ""
    choices = ["A", "B", "C", "D"]
    text = response.strip()
    for ch in [",", ".", "!", "?", ";", ":", "'", '"']:
        text = text.strip(ch)
    text = " " + text + " "
    cands: list[tuple[str, int, str]] = []
    for fmt, shape in (
        ("parentheses", "({})"),
        ("period", "{}."),
        ("colon", "{}:"),
        ("right_paren", "{})"),
        ("space", "{} "),
    ):
        for ch in choices:
            if shape.format(ch) in text:
                cands.append((ch, text.rfind(shape.format(ch)), fmt))
    low = text.lower()
    for phrase in _PHRASES:
        idx = low.find(phrase)
        if idx != -1:
            for ch in choices:
                pos = text.find(ch, idx + len(phrase))
                if pos != -1:
                    cands.append((ch, pos, "phrase"))
    core = text.strip()
    for ch in choices:
        if core.startswith(ch) and (len(core) == 1 or not core[1].isalpha()):
            cands.append((ch, 0, "start"))
    for ch in choices:
        if core.endswith(ch) and (len(core) == 1 or not core[-2].isalpha()):
            cands.append((ch, len(text) - 1, "end"))
    if not cands:
        cands = [(ch, text.rfind(ch), "fallback") for ch in choices if ch in text]
    if not cands:
        return ""
    cands.sort(key=lambda c: (_PRIORITY.get(c[2], 0), c[1]), reverse=True)
    return cands[0][0]


def official_read(
    results: list[dict[str, Any]], video_types: list[str], skip_missing: bool
) -> tuple[int, int]:
    """(correct, answered) as ``eval_your_results`` counts them over ``video_types``; the keys are
    read exactly where the script reads them, so a missing key raises ``KeyError`` as it does."""
    correct = answered = 0
    for video_type in video_types:
        videos = [item for item in results if item["duration"] == video_type]
        if not skip_missing and len(videos) != 300:
            raise AssertionError(f"Number of files in {video_type} is not 300.")
        for item in videos:
            if skip_missing and item["missing"]:
                continue
            _category, _sub = item["domain"], item["sub_category"]
            for question in item["questions"]:
                _task = question["task_type"]
                letter = official_extract(question["response"])
                if letter != "":
                    answered += 1
                    correct += letter == question["answer"]
    return correct, answered


def lmms_eval_overall(rows: list[tuple[str, str]]) -> float:
    """``videomme_process_results`` + ``videomme_aggregate_results`` overall, for (reply, answer)
    rows: every reply counts, its extracted letter compared with the answer, in percent."""
    correct = sum(lmms_eval_extract(reply) == answer for reply, answer in rows)
    return 100 * correct / len(rows) if rows else 0


def mvbench_aggregate(results: list[dict[str, Any]]) -> float:
    """``{"pred_answer": <reply>, "score": 0|1}`` rows: 100 · right / non-empty replies."""
    answered = correct = 0
    for result in results:
        if result["pred_answer"] != "":
            answered += 1
            correct += result["score"]
    return 100 * correct / answered if answered > 0 else 0


def mlvu_dev_aggregate(results: list[dict[str, Any]]) -> float:
    """``{"task_type", "pred_answer", "answer"}`` rows: the mean of the seven types' accuracies
    (× 100), a type matched by substring of the keys, as upstream loops."""
    types = {"anomaly_reco", "count", "ego", "needle", "order", "plotQA", "topic_reasoning"}
    counts = {t: {"correct": 0, "answered": 0} for t in types}
    for result in results:
        counts[result["task_type"]]["answered"] += 1
        counts[result["task_type"]]["correct"] += result["pred_answer"] == result["answer"]
    scores = {}
    for wanted in types:
        right = sum(v["correct"] for k, v in counts.items() if wanted in k)
        total = sum(v["answered"] for k, v in counts.items() if wanted in k)
        scores[wanted] = 100 * right / total if total > 0 else 0
    return sum(scores.values()) / len(types)


def _relevance(scores: list[int]) -> float:
    table = {0: 0.0, 1: 100.0 / 16, 2: 100.0 * 4 / 16, 3: 100.0 * 9 / 16, 4: 100.0}
    return table.get(sum(scores), 0.0)


def _logic(scores: list[int], structure: str) -> float:
    shape = ast.literal_eval(structure)
    last = -1
    for idx, val in enumerate(scores):
        if val:
            last = idx
        else:
            break
    if shape == [1, 2, 3, 4]:
        table = {0: 0.0, 1: 100.0 / 16, 2: 100.0 * 4 / 16, 3: 100.0 * 9 / 16, 4: 100.0}
    elif shape == [1, [2, 3], 4]:
        table = {0: 0.0, 1: 100.0 / 12, 2: 100.0 * 4 / 12, 3: 100.0 * 7 / 12, 4: 100.0}
        if last == 0 and scores[2]:
            last += 1
    elif shape == [[1, 2], 3, 4]:
        table = {0: 0.0, 1: 100.0 / 10, 2: 100.0 * 2 / 10, 3: 100.0 * 5 / 10, 4: 100.0}
        if last == -1 and scores[1]:
            last += 1
    else:
        raise ValueError(f"Unknown group_structure_list: {shape}")
    return table.get(last + 1, 0.0)


def videomme_v2_overall_score(results: list[dict[str, Any]]) -> float:
    """``{"video_id", "question_id", "group_type", "group_structure", "score"}`` rows: groups by
    video, each sorted by the number after the id's last ``-``, typed by its first question."""
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in results:
        groups[r["video_id"]].append(r)
    scores = []
    for items in groups.values():
        items.sort(key=lambda x: int(x["question_id"].split("-")[-1]))
        bits = [item["score"] for item in items]
        kind, structure = items[0]["group_type"], items[0]["group_structure"]
        if kind == "relevance":
            scores.append(_relevance(bits))
        elif kind == "logic":
            scores.append(_logic(bits, structure))
        else:
            raise ValueError(f"Unknown group_type: {kind}")
    return sum(scores) / len(scores) if scores else 0.0
