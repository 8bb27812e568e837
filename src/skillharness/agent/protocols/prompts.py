"""The prompt texts of the reference evaluations, byte for byte.

Sources (read at the commits named in docs/protocols.md):

- lmms-eval ``lmms_eval/tasks/videomme/utils.py``: ``videomme_doc_to_text`` (no subtitles; the
  task yaml's default ``post_prompt`` is ``"\\nAnswer with the option's letter from the given
  choices directly."``, hence the blank line) and ``videomme_doc_to_text_subtitle``. Both say
  "based on the video and the subtitles", with or without subtitles.
- VLMEvalKit ``vlmeval/dataset/videomme.py``: ``FRAMES_TMPL_NOSUB`` / ``FRAMES_TMPL_SUB`` and
  ``"Question: {}\\nAnswer: "``; its message starts with an empty ``SYS`` text part, which the
  API wrapper on main skips.
- Video-MME README ("Evaluation Pipeline", the prompt examples).

Options are the dataset's strings verbatim (``"A. ..."``), one per line, as every reference does.
"""

from __future__ import annotations

from skillharness.data.questions import Question

__all__ = [
    "LMMS_EVAL_INSTRUCTION",
    "OFFICIAL_INSTRUCTION",
    "lmms_eval_text",
    "official_text",
    "vlmevalkit_texts",
]

LMMS_EVAL_INSTRUCTION = (
    "Select the best answer to the following multiple-choice question based on the video and the "
    "subtitles. Respond with only the letter (A, B, C, or D) of the correct option."
)
_LMMS_EVAL_POST = "\nAnswer with the option's letter from the given choices directly."
_LMMS_EVAL_SUBTITLE_HEAD = "This video's subtitles are listed below: \n"  # the space is the reference's
OFFICIAL_INSTRUCTION = (
    "Select the best answer to the following multiple-choice question based on the video. "
    "Respond with only the letter (A, B, C, or D) of the correct option."
)
_VLMEVALKIT_NOSUB = "\nThese are the frames of a video. " + OFFICIAL_INSTRUCTION + "\n"
_VLMEVALKIT_SUB = (
    "\nThese are the frames of a video. This video's subtitles are listed below:\n{}\n"
    + OFFICIAL_INSTRUCTION
    + "\n"
)


def _question_block(question: Question) -> str:
    return question.question + "\n" + "\n".join(question.options)


def lmms_eval_text(question: Question, subtitles: str | None) -> str:
    """lmms-eval's prompt; ``subtitles=None`` is the ``videomme`` task, a string ``videomme_w_subtitle``."""
    block = _question_block(question)
    if subtitles is None:
        return LMMS_EVAL_INSTRUCTION + "\n" + block + "\n" + _LMMS_EVAL_POST
    return (
        _LMMS_EVAL_SUBTITLE_HEAD
        + subtitles
        + "\n"
        + LMMS_EVAL_INSTRUCTION
        + "\n"
        + block
        + "\n"
        + "The best answer is:"
    )


def vlmevalkit_texts(question: Question, subtitles: str | None) -> tuple[str, str, str]:
    """VLMEvalKit's three text parts: the empty system slot (before the frames), the frame
    template (after them) and the question part."""
    template = _VLMEVALKIT_NOSUB if subtitles is None else _VLMEVALKIT_SUB.format(subtitles)
    return "", template, f"Question: {_question_block(question)}\nAnswer: "


def official_text(question: Question, subtitles: str | None) -> str:
    """The Video-MME README prompt (its examples: no trailing spaces); no subtitle block without them."""
    tail = OFFICIAL_INSTRUCTION + "\n" + _question_block(question) + "\nThe best answer is:"
    if subtitles is None:
        return tail
    return "This video's subtitles are listed below:\n" + subtitles + "\n" + tail
