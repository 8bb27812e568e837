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
The references' instructions name Video-MME's four letters; a question with another number of
options gets its own letters in their place (``(A, B, C, D, or E)``), and a four-option question
the references' bytes.
"""

from __future__ import annotations

from skillharness.data.questions import Question

__all__ = [
    "LMMS_EVAL_INSTRUCTION",
    "LMMS_EVAL_POST_PROMPT",
    "OFFICIAL_INSTRUCTION",
    "lmms_eval_text",
    "official_text",
    "vlmevalkit_texts",
]

LMMS_EVAL_INSTRUCTION = (
    "Select the best answer to the following multiple-choice question based on the video and the "
    "subtitles. Respond with only the letter (A, B, C, or D) of the correct option."
)
LMMS_EVAL_POST_PROMPT = "\nAnswer with the option's letter from the given choices directly."
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


_VIDEO_MME_LETTERS = "(A, B, C, or D)"


def _letters_phrase(letters: tuple[str, ...]) -> str:
    if len(letters) == 2:
        return f"({letters[0]} or {letters[1]})"
    return "(" + ", ".join(letters[:-1]) + f", or {letters[-1]})"


def _instruction(text: str, question: Question) -> str:
    """``text`` naming the question's letters where the reference names Video-MME's four."""
    return text.replace(_VIDEO_MME_LETTERS, _letters_phrase(question.letters))


def _question_block(question: Question) -> str:
    return question.question + "\n" + "\n".join(question.options)


def lmms_eval_text(
    question: Question, subtitles: str | None, post_prompt: str = LMMS_EVAL_POST_PROMPT
) -> str:
    """lmms-eval's prompt; ``subtitles=None`` is the ``videomme`` task, a string ``videomme_w_subtitle``
    (whose text has no ``post_prompt``). ``post_prompt``: the task yaml's, the default unless the
    bundle is placed there (:mod:`.slots`)."""
    block = _question_block(question)
    instruction = _instruction(LMMS_EVAL_INSTRUCTION, question)
    if subtitles is None:
        return instruction + "\n" + block + "\n" + post_prompt
    return (
        _LMMS_EVAL_SUBTITLE_HEAD
        + subtitles
        + "\n"
        + instruction
        + "\n"
        + block
        + "\n"
        + "The best answer is:"
    )


def vlmevalkit_texts(question: Question, subtitles: str | None) -> tuple[str, str, str]:
    """VLMEvalKit's three text parts: the empty system slot (before the frames), the frame
    template (after them) and the question part."""
    # The letters are set before the subtitles go in, so a subtitle line is never rewritten.
    template = _instruction(_VLMEVALKIT_NOSUB if subtitles is None else _VLMEVALKIT_SUB, question)
    if subtitles is not None:
        template = template.format(subtitles)
    return "", template, f"Question: {_question_block(question)}\nAnswer: "


def official_text(question: Question, subtitles: str | None) -> str:
    """The Video-MME README prompt (its examples: no trailing spaces); no subtitle block without them."""
    tail = (
        _instruction(OFFICIAL_INSTRUCTION, question)
        + "\n"
        + _question_block(question)
        + "\nThe best answer is:"
    )
    if subtitles is None:
        return tail
    return "This video's subtitles are listed below:\n" + subtitles + "\n" + tail
