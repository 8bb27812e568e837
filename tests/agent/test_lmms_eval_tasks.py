"""Each benchmark's own lmms-eval task, against what upstream's functions return at the pinned
commit (``fixtures/protocols/lmms_eval_tasks.json``, written by ``capture_lmms_eval_tasks.py``
from the documents in ``lmms_eval_task_docs.json``)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from skillharness.agent.protocols import ProtocolName, ReferenceOptions, build_turn, lmms_eval_task
from skillharness.agent.protocols.extract import strip_reasoning
from skillharness.agent.protocols.tasks import jsonl_words
from skillharness.data.adapter import builtin_adapters, load_adapter
from skillharness.data.questions import OPTION_LETTERS, Question
from skillharness.errors import ConfigError, DataError
from skillharness.video import FrameLayout, FramesConfig

FIXTURES = Path(__file__).parent / "fixtures" / "protocols"
DOCS = json.loads((FIXTURES / "lmms_eval_task_docs.json").read_text(encoding="utf-8"))
CAPTURED = json.loads((FIXTURES / "lmms_eval_tasks.json").read_text(encoding="utf-8"))
VIDEO_MME = json.loads((FIXTURES / "captured.json").read_text(encoding="utf-8"))
BENCHMARKS = ("mvbench", "egoschema", "longvideobench", "mlvu", "nextqa", "videomme_v2")


def _question(question: str, options: Sequence[str], **extra: object) -> Question:
    lettered = tuple(f"{OPTION_LETTERS[i]}. {text}" for i, text in enumerate(options))
    return Question(
        video_id="v1",
        duration="all",
        videoID="v1",
        question_id="q1",
        task_type="count",
        question=question,
        options=lettered,
        answer="A",
        **extra,  # type: ignore[arg-type]
    )


def _ours(benchmark: str, index: int) -> Question:
    ours = DOCS["docs"][benchmark][index]["ours"]
    return _question(ours["question"], ours["options"])


CASES = [(b, i) for b in BENCHMARKS for i in range(len(DOCS["docs"][b]))]


@pytest.mark.parametrize(("benchmark", "index"), CASES)
def test_prompt_is_upstreams_doc_to_text_byte_for_byte(benchmark: str, index: int) -> None:
    task = lmms_eval_task(benchmark)
    assert task is not None
    assert task.text(_ours(benchmark, index), None) == CAPTURED["texts"][benchmark][index]


READERS = {
    "mvbench": ("Question", DOCS["read_options"]["nextqa"]),
    "egoschema": ("Question", [o[3:] for o in DOCS["read_options"]["egoschema"]]),
    "longvideobench": ("Question", DOCS["read_options"]["nextqa"]),
    "nextqa": ("Question", DOCS["read_options"]["nextqa"]),
    "videomme_v2": ("Question", DOCS["read_options"]["nextqa"]),
}


@pytest.mark.parametrize("benchmark", sorted(READERS))
def test_each_task_reads_replies_as_its_own_extractor(benchmark: str) -> None:
    task = lmms_eval_task(benchmark)
    assert task is not None
    question = _question(*READERS[benchmark])
    # The evaluator strips reasoning tags before the task reads: the fixture holds the task's
    # function on the stripped reply (every stripped reply is itself a fixture reply).
    expected = CAPTURED["reads"][benchmark]
    got = {reply: task.read(reply, question) for reply in expected}
    assert got == {reply: expected[strip_reasoning(reply)] for reply in expected}


def test_mlvu_reads_through_extract_mcq_answer_over_a_to_d_only() -> None:
    task = lmms_eval_task("mlvu")
    assert task is not None
    question = _question("q", ["a", "b", "c", "d", "e"])
    assert task.read("(B)", question) == "B"
    assert task.read("E", question) == ""  # upstream passes choices A-D
    assert task.read("<think>A</think>Answer: D", question) == "D"


def test_every_builtin_section_names_known_rules() -> None:
    with_task = {name for name, adapter in builtin_adapters().items() if adapter.lmms_eval is not None}
    assert with_task == set(BENCHMARKS)
    for name in BENCHMARKS:
        task = lmms_eval_task(name)
        assert task is not None
        assert task.spec.frames == "qwen_vl"
    assert lmms_eval_task("videomme") is None
    assert lmms_eval_task(None) is None


def test_task_values_are_upstreams() -> None:
    expected = {
        "mvbench": ("mvbench_<sub_task>", 16, "ignore"),
        "egoschema": ("egoschema_subset", 1024, "respect"),
        "longvideobench": ("longvideobench_val_v", 32, "respect"),
        "mlvu": ("mlvu_dev", 16, "respect"),
        "nextqa": ("nextqa_mc_test", 1024, "respect"),
        "videomme_v2": ("videomme_v2", 64, "respect"),
    }
    for name, (task_name, tokens, clip) in expected.items():
        task = lmms_eval_task(name)
        assert task is not None
        assert (task.name(False), task.spec.max_new_tokens, task.spec.clip_window) == (
            task_name,
            tokens,
            clip,
        )
    v2 = lmms_eval_task("videomme_v2")
    assert v2 is not None
    assert v2.name(True) == "videomme_v2_w_subtitle"


class FakeMedia:
    """Frames by index from a fixed layout; records which question each call was asked for."""

    def __init__(self, subtitle: Path | None = None, layout: FrameLayout | None = None) -> None:
        self.asked: list[Question] = []
        self.subtitle = subtitle
        self._layout = layout or FrameLayout(300, 30.0)

    async def layout(self, question: Question) -> FrameLayout:
        self.asked.append(question)
        return self._layout

    async def frames_at(
        self, question: Question, indices: Sequence[int], layout: FrameLayout
    ) -> list[np.ndarray]:
        self.asked.append(question)
        return [np.full((48, 64, 3), i % 255, dtype=np.uint8) for i in indices]

    def subtitle_file(self, question: Question) -> Path | None:
        return self.subtitle


def _options(benchmark: str | None, *, subtitles: bool = False) -> ReferenceOptions:
    return ReferenceOptions(
        ProtocolName.LMMS_EVAL, None, True, subtitles, FramesConfig(longest_side=48), benchmark=benchmark
    )


async def test_mvbench_turn_sends_the_whole_video_not_the_clip() -> None:
    ours = DOCS["docs"]["mvbench"][0]["ours"]
    question = _question(ours["question"], ours["options"], clip_start=2.0, clip_end=4.0)
    media = FakeMedia()
    turn = await build_turn(question, media, _options("mvbench"))
    assert all(q.clip_start is None and q.clip_end is None for q in media.asked)
    assert turn.frame_indices == (0, 33, 66, 100, 133, 166, 199, 233, 266, 299)
    content = turn.messages[0]["content"]
    assert [part["type"] for part in content] == ["image_url"] * 10 + ["text"]
    assert content[-1]["text"] == CAPTURED["texts"]["mvbench"][0]
    assert turn.sampling.max_tokens == 16
    assert turn.sampling.temperature == 0.0


async def test_a_task_without_a_clip_rule_keeps_the_window() -> None:
    ours = DOCS["docs"]["nextqa"][0]["ours"]
    question = _question(ours["question"], ours["options"], clip_start=2.0, clip_end=4.0)
    media = FakeMedia()
    turn = await build_turn(question, media, _options("nextqa"))
    assert all(q.clip_start == 2.0 for q in media.asked)
    assert turn.sampling.max_tokens == 1024
    assert turn.text == CAPTURED["texts"]["nextqa"][0]


def _v2_question() -> Question:
    return _ours("videomme_v2", 1)


async def test_videomme_v2_with_subtitles_prepends_every_word(tmp_path: Path) -> None:
    words = tmp_path / "v1.jsonl"
    lines = [{"text": "Hello", "start_time": 0.0, "end_time": 0.4}, {"text": "world.", "start_time": 0.5}]
    words.write_text("\n".join(json.dumps(line) for line in lines) + "\n\n", encoding="utf-8")
    turn = await build_turn(_v2_question(), FakeMedia(words), _options("videomme_v2", subtitles=True))
    plain = CAPTURED["texts"]["videomme_v2"][1]
    assert turn.text == "This video's subtitles are listed below:\nHello world.\n\n" + plain
    assert turn.subtitles == ("Hello world.",)
    assert turn.sampling.max_tokens == 64


async def test_videomme_v2_without_a_subtitle_file_sends_no_block(tmp_path: Path) -> None:
    options = _options("videomme_v2", subtitles=True)
    turn = await build_turn(_v2_question(), FakeMedia(tmp_path / "none.jsonl"), options)
    assert turn.text == CAPTURED["texts"]["videomme_v2"][1]
    assert turn.subtitles == ()


def test_a_broken_jsonl_subtitle_file_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"text": "ok"}\nnot json\n', encoding="utf-8")
    with pytest.raises(DataError, match=r"bad\.jsonl:2"):
        jsonl_words(path)


async def test_subtitles_on_for_a_task_without_a_subtitle_variant_is_refused() -> None:
    with pytest.raises(ConfigError, match="mvbench_<sub_task> has no subtitle variant"):
        await build_turn(_ours("mvbench", 1), FakeMedia(), _options("mvbench", subtitles=True))


@pytest.mark.parametrize("benchmark", [None, "videomme"])
async def test_video_mme_request_is_unchanged_without_a_task_section(benchmark: str | None) -> None:
    doc = VIDEO_MME["question"]
    question = Question(
        video_id="001",
        duration="short",
        videoID="cook",
        question_id="001-1",
        task_type="Object Recognition",
        question=doc["question"],
        options=tuple(doc["options"]),
        answer="B",
    )
    media = FakeMedia(layout=FrameLayout(200, 10.0))
    turn = await build_turn(question, media, _options(benchmark))
    baseline = await build_turn(question, FakeMedia(layout=FrameLayout(200, 10.0)), _options(None))
    assert turn.text == VIDEO_MME["lmms_eval_text"]["nosub"]
    assert turn.messages == baseline.messages
    assert turn.frame_indices == (0, 22, 44, 66, 88, 111, 133, 155, 177, 199)
    assert turn.sampling.max_tokens == 16


def _adapter_file(tmp_path: Path, **section: object) -> Path:
    base = {
        "task": "t",
        "prompt": "{question}\n{options}",
        "option": "{letter}. {text}",
        "max_new_tokens": 8,
        "extractor": "extract_mcq_answer",
        "metric": {"name": "m", "rule": "accuracy"},
    }
    raw = {
        "format": "json",
        "video_id": "video",
        "question": "question",
        "task_type": {"constant": "T"},
        "options": {"form": "list", "field": "candidates"},
        "answer": {"field": "answer", "form": "text"},
        "lmms_eval": {**base, **section},
    }
    path = tmp_path / "mine.yaml"
    path.write_text(json.dumps(raw), encoding="utf-8")  # JSON is YAML
    return path


def test_an_unknown_slot_fails_when_the_adapter_loads(tmp_path: Path) -> None:
    with pytest.raises(DataError, match=r"unknown slot\(s\) \['choices'\]"):
        load_adapter(_adapter_file(tmp_path, prompt="{question}\n{choices}"))


def test_an_unknown_extractor_name_is_a_config_error(tmp_path: Path) -> None:
    path = _adapter_file(tmp_path, extractor="guess")
    with pytest.raises(ConfigError, match=r"lmms_eval\.extractor 'guess' is not one of"):
        lmms_eval_task(str(path))


def test_a_users_adapter_renders_through_the_same_path(tmp_path: Path) -> None:
    task = lmms_eval_task(str(_adapter_file(tmp_path, option="[{letter}] {text}", option_separator=" ")))
    assert task is not None
    assert task.text(_question("Which?", ["x", "y"]), None) == "Which?\n[A] x [B] y"
