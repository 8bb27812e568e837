"""The synthetic benchmark written in another benchmark's file layout, read off its adapter.

The generator's questions (Video-MME's form) are written as the adapter reads them back: each
value where the adapter looks for it and in its form (options as a list, lines or columns,
lettered or not; the answer as a letter, an index or the option's text, in the row or in a
separate answers file), task types in the adapter's vocabulary, one file per task for a folder
layout, clip windows, subtitle files and question groups where the adapter has them. Nothing here
names a benchmark: a user's adapter YAML gets the same treatment as a built-in one.

Shape (:func:`layout_shape`): four questions per video when the adapter scores groups (the
group size), one when the question id is the video id (EgoSchema's ``q_uid``), else three; as
many options as the adapter's columns or its reference task's choices (else four); and, when the
adapter reads clip windows, every second video inside a longer file.
"""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillharness.data.adapter import Adapter, Source
from skillharness.data.groups import GROUP_SIZE
from skillharness.data.questions import OPTION_LETTERS
from skillharness.data.synth_distractors import SynthShape
from skillharness.util.atomic import atomic_write_bytes, atomic_write_text

__all__ = [
    "BASE_LAYOUT",
    "WrittenLayout",
    "layout_shape",
    "questions_path",
    "synthetic_questions",
    "write_layout",
]

# The generator's own form: the synthetic benchmark in this layout is written as it always was.
BASE_LAYOUT = "videomme"
_PAD_S = 2.0  # filler before and after a clip-window video: one keyframe interval
_SUBTITLE_OFFSET_S = 30.0  # the file clock at video start, for every second video with an offset field
_QUESTIONS_DIR = "questions"
Cues = Mapping[str, Sequence[Sequence[Any]]]


@dataclass(frozen=True)
class WrittenLayout:
    rows: list[dict[str, Any]]
    truth: dict[str, Any]
    manifest: dict[str, Any]


def layout_shape(adapter: Adapter) -> SynthShape:
    """How many questions per video and options per question ``adapter``'s benchmark has."""
    if adapter.group is not None:
        per_video = GROUP_SIZE
    elif adapter.question_id is not None and adapter.question_id == adapter.video_id:
        per_video = 1
    else:
        per_video = 3
    if adapter.options.form == "columns":
        options = len(adapter.options.columns)
    elif adapter.lmms_eval is not None and adapter.lmms_eval.choices:
        options = len(adapter.lmms_eval.choices)
    else:
        options = 4
    return SynthShape(per_video=per_video, options=options, pad_s=_PAD_S if adapter.clip else 0.0)


def questions_path(folder: Path, adapter: Adapter) -> Path:
    """What to give ``data check`` / ``--questions`` for a benchmark written in ``adapter``'s layout."""
    if adapter.format == "folder":
        return folder / _QUESTIONS_DIR
    return folder / f"questions.{adapter.format}"


def synthetic_questions(folder: Path) -> tuple[Path, str]:
    """The questions path and the layout (adapter name) of a synthetic benchmark in ``folder``."""
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    return folder / manifest.get("questions_path", "questions.json"), manifest.get("benchmark", BASE_LAYOUT)


def _vocabulary(adapter: Adapter) -> tuple[str, ...]:
    """The task types questions are labelled with; empty: the generator's own (Video-MME's)."""
    if adapter.task_type.constant is not None:
        return (adapter.task_type.constant,)
    if adapter.task_types:
        return adapter.task_types
    if adapter.lmms_eval is not None and adapter.lmms_eval.metric.task_types:
        return adapter.lmms_eval.metric.task_types
    return ()


def write_layout(
    folder: Path, adapter: Adapter, rows: list[dict[str, Any]], truth: dict[str, Any], cues: Cues
) -> WrittenLayout:
    """Write ``rows`` (the generator's Video-MME-form rows) in ``adapter``'s layout under ``folder``."""
    vocabulary = _vocabulary(adapter)
    raw_names = {final: raw for raw, final in adapter.task_names.items()}
    per_video: Counter[str] = Counter()
    entries: list[_Entry] = []
    for n, row in enumerate(rows):
        per_video[row["videoID"]] += 1
        label = vocabulary[n % len(vocabulary)] if vocabulary else row["task_type"]
        entries.append(_entry(row, per_video[row["videoID"]], label, raw_names.get(label, label)))
    files: dict[str, list[dict[str, Any]]] = {}
    answers: dict[str, Any] = {}
    out_rows, out_truth = [], {}
    for entry in entries:
        file_name = _file_for(adapter, entry)
        record = _record(adapter, entry, len(files.setdefault(file_name, [])) + 1, cues)
        files[file_name].append(record.data)
        if adapter.answers is not None:
            answers[record.question_id] = _answer_value(adapter.answers.form, entry)
        out_rows.append({**entry.base, "question_id": record.question_id, "task_type": entry.label})
        out_truth[record.question_id] = {
            **truth[entry.base["question_id"]],
            "answer": entry.letter,
            "task_type": entry.label,
            "options": len(entry.texts),
            "clip_s": [base_clip for base_clip in (entry.base.get("clip_start"), entry.base.get("clip_end"))]
            if entry.base.get("clip_start") is not None
            else None,
        }
        if record.subtitle is not None:
            _write_subtitles(folder / "subtitles" / record.subtitle, entry, cues, record.offset)
    _write_files(folder, adapter, files)
    if adapter.subtitle is not None:  # the layout's own subtitle files replace the generator's .srt
        for srt in (folder / "subtitles").glob("*.srt"):
            srt.unlink()
    if adapter.answers is not None:
        _write_answers(folder, adapter, answers)
    manifest = {
        "benchmark": adapter.name,
        "questions_path": questions_path(folder, adapter).relative_to(folder).as_posix(),
        "questions": len(out_rows),
        "task_types": dict(Counter(r["task_type"] for r in out_rows)),
        "options": dict(Counter(str(len(r["options"])) for r in out_rows)),
        "clip_windows": sum(1 for r in out_rows if r.get("clip_start") is not None),
    }
    return WrittenLayout(out_rows, out_truth, manifest)


@dataclass(frozen=True)
class _Entry:
    base: dict[str, Any]  # the generator's row
    number: int  # the question's place among its video's (1-based)
    label: str  # task type as reports show it
    raw: str  # task type as the file holds it (before the adapter's task_names)

    @property
    def texts(self) -> list[str]:
        return [option.partition(". ")[2] for option in self.base["options"]]

    @property
    def letter(self) -> str:
        return str(self.base["answer"])

    @property
    def index(self) -> int:
        return OPTION_LETTERS.index(self.letter)


def _entry(row: dict[str, Any], number: int, label: str, raw: str) -> _Entry:
    return _Entry(row, number, label, raw)


@dataclass(frozen=True)
class _Record:
    data: dict[str, Any]
    question_id: str
    subtitle: str | None
    offset: float


def _put(source: Source | None, value: str, data: dict[str, Any]) -> None:
    if source is not None and source.field is not None:
        data[source.field] = value


def _record(adapter: Adapter, entry: _Entry, row_number: int, cues: Cues) -> _Record:
    base, key = entry.base, entry.base["videoID"]
    data: dict[str, Any] = {}
    _put(adapter.video_id, key, data)
    _put(adapter.video_file, f"{key}.mp4", data)
    question_id = _question_id(adapter, entry, row_number, data)
    _put(adapter.question, base["question"], data)
    _put(adapter.task_type, entry.raw, data)
    _put(adapter.duration, base["duration"], data)
    _put(adapter.domain, base["domain"], data)
    _put(adapter.sub_category, base["sub_category"], data)
    _put(adapter.url, base["url"], data)
    data.update(_options(adapter, entry))
    if adapter.answer is not None:
        data[adapter.answer.field] = _answer_value(adapter.answer.form, entry)
    if adapter.clip is not None and base.get("clip_start") is not None:
        data[adapter.clip.start], data[adapter.clip.end] = base["clip_start"], base["clip_end"]
    if adapter.group is not None:
        logic = int(str(base["video_id"])) % 2 == 0  # half the groups each way
        data[adapter.group.type] = "logic" if logic else "relevance"
        data[adapter.group.structure] = "[1, 2, 3, 4]" if logic else ""
    subtitle, offset = _subtitle(adapter, entry, data, cues)
    return _Record(data, question_id, subtitle, offset)


def _question_id(adapter: Adapter, entry: _Entry, row_number: int, data: dict[str, Any]) -> str:
    """The id the adapter derives for this row, writing the fields it derives it from."""
    source, key = adapter.question_id, entry.base["videoID"]
    if source is None:  # the adapter numbers the rows of each file
        return f"{Path(_file_for(adapter, entry)).stem}-{row_number}"
    if source.field is not None:
        if source.field not in data:
            data[source.field] = f"{key}-{entry.number}"
        return str(data[source.field])
    if source.template is not None:
        for name in source.template_fields:
            data.setdefault(name, str(entry.number))
        return source.template.format(**{name: str(data[name]) for name in source.template_fields})
    return source.constant or entry.raw  # a constant id cannot tell questions apart; load says so


def _options(adapter: Adapter, entry: _Entry) -> dict[str, Any]:
    spec, texts = adapter.options, entry.texts
    shown = [f"{OPTION_LETTERS[i]}. {t}" for i, t in enumerate(texts)] if spec.prefixed else texts
    if spec.form == "columns":
        blank = spec.missing[0] if spec.missing else ""
        return {name: shown[i] if i < len(shown) else blank for i, name in enumerate(spec.columns)}
    if spec.form == "lines":
        return {str(spec.field): "\n".join(shown)}
    return {str(spec.field): list(shown)}


def _answer_value(form: str, entry: _Entry) -> Any:
    if form == "text":
        return entry.texts[entry.index]
    if form == "index0":
        return entry.index
    if form == "index1":
        return entry.index + 1
    return entry.letter


def _subtitle(adapter: Adapter, entry: _Entry, data: dict[str, Any], cues: Cues) -> tuple[str | None, float]:
    spec, key = adapter.subtitle, entry.base["videoID"]
    if spec is None or not cues.get(key):
        return None, 0.0
    if spec.path.template is not None:
        path = spec.path.template.format(**{n: str(data.get(n, key)) for n in spec.path.template_fields})
    else:
        path = f"{key}_en.json"  # a path in a field: LongVideoBench's JSON cue list
        _put(spec.path, path, data)
    offset = 0.0
    if spec.offset is not None:
        offset = _SUBTITLE_OFFSET_S if int(str(entry.base["video_id"])) % 2 else 0.0
        data[spec.offset] = offset
    return path, offset


def _write_subtitles(path: Path, entry: _Entry, cues: Cues, offset: float) -> None:
    """The video's narration as the path's suffix says: a JSON cue list (times on the file's
    clock, ``offset`` ahead of the video's), word-level JSON lines, or SRT."""
    if path.exists():
        return  # a video's questions share its file
    lines = [(float(s) + offset, float(e) + offset, str(t)) for s, e, t in cues[entry.base["videoID"]]]
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".jsonl":
        words = []
        for start, end, text in lines:
            parts = text.split()
            step = (end - start) / len(parts)
            words += [
                {
                    "text": w,
                    "start_time": round(start + i * step, 3),
                    "end_time": round(start + (i + 1) * step, 3),
                }
                for i, w in enumerate(parts)
            ]
        atomic_write_text(path, "".join(json.dumps(w, ensure_ascii=False) + "\n" for w in words))
    elif path.suffix == ".json":
        cue_list = [{"start": _clock(s), "end": _clock(e), "line": t} for s, e, t in lines]
        atomic_write_text(path, json.dumps(cue_list, indent=1, ensure_ascii=False) + "\n")
    else:
        blocks = [
            f"{n}\n{_clock(s, ',')} --> {_clock(e, ',')}\n{t}\n" for n, (s, e, t) in enumerate(lines, 1)
        ]
        atomic_write_text(path, "\n".join(blocks))


def _clock(t: float, mark: str = ".") -> str:
    ms = round(t * 1000)
    return f"{ms // 3_600_000:02d}:{ms // 60_000 % 60:02d}:{ms // 1000 % 60:02d}{mark}{ms % 1000:03d}"


def _file_for(adapter: Adapter, entry: _Entry) -> str:
    """The file a row goes to: the questions file, or (folder layouts) its task's file."""
    if adapter.format != "folder":
        return f"questions.{adapter.format}"
    listed = [f for f in adapter.files if not any(c in f for c in "*?[")]
    for name in listed:
        stem = Path(name).stem
        if stem in (entry.raw, entry.label) or stem.endswith((f"_{entry.raw}", f"_{entry.label}")):
            return f"{_QUESTIONS_DIR}/{name}"
    pattern = next((f for f in adapter.files if "*" in f), "*.json")
    return f"{_QUESTIONS_DIR}/{pattern.replace('*', entry.raw, 1)}"


def _write_files(folder: Path, adapter: Adapter, files: dict[str, list[dict[str, Any]]]) -> None:
    base = folder / "questions.json"
    base.unlink(missing_ok=True)  # the generator's form is not part of this layout
    for name, rows in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        _write_rows(path, rows)


def _write_rows(path: Path, rows: list[dict[str, Any]]) -> None:
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        import pyarrow as pa  # imported lazily: pyarrow is slow to import
        import pyarrow.parquet as pq

        buffer = io.BytesIO()
        pq.write_table(pa.Table.from_pylist(rows), buffer)
        atomic_write_bytes(path, buffer.getvalue())
    elif suffix == ".jsonl":
        atomic_write_text(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    elif suffix in (".csv", ".tsv"):
        names = list(dict.fromkeys(name for row in rows for name in row))
        text = io.StringIO()
        writer = csv.DictWriter(text, names, delimiter="\t" if suffix == ".tsv" else ",", lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: json.dumps(v) if isinstance(v, list) else v for k, v in row.items()})
        atomic_write_text(path, text.getvalue())
    else:
        atomic_write_text(path, json.dumps(rows, indent=1, ensure_ascii=False) + "\n")


def _write_answers(folder: Path, adapter: Adapter, answers: dict[str, Any]) -> None:
    spec = adapter.answers
    assert spec is not None
    base = questions_path(folder, adapter)
    path = (base if base.is_dir() or adapter.format == "folder" else base.parent) / spec.file
    if spec.id_field is None or spec.answer_field is None:
        atomic_write_text(path, json.dumps(answers, indent=1, ensure_ascii=False) + "\n")
        return
    rows = [{spec.id_field: qid, spec.answer_field: value} for qid, value in answers.items()]
    path.parent.mkdir(parents=True, exist_ok=True)
    _write_rows(path, rows)
