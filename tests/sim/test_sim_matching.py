"""Which question a prompt is about: texts and options that share prefixes never mislead it."""

from __future__ import annotations

from sim_support import first_messages

from skillharness.data.questions import Question
from skillharness.sim.matching import QuestionIndex
from skillharness.sim.prompt import first_user_text


def _question(qid: str, text: str, options: tuple[str, ...]) -> Question:
    return Question(
        video_id=qid[:3],
        duration="short",
        videoID=f"v{qid[:3]}",
        question_id=qid,
        task_type="Counting Problem",
        question=text,
        options=options,
        answer="A",
    )


def test_same_question_whose_options_extend_anothers_is_told_apart() -> None:
    # Same text about two videos; the second's options begin with the first's ("3" vs "3.5"),
    # so every option of the first also appears, word for word, in the second's prompt.
    short = _question("001-1", "How many apples are on the table?", ("A. 3", "B. 4", "C. 5", "D. 6"))
    longer = _question("002-1", "How many apples are on the table?", ("A. 3.5", "B. 4.5", "C. 5.5", "D. 6.5"))
    index = QuestionIndex([short, longer])
    for question in (short, longer):
        text = first_user_text({"messages": first_messages(question)})
        assert index.find(text) is question


def test_question_whose_text_extends_anothers_is_told_apart() -> None:
    options = ("A. One.", "B. Two.", "C. Three.", "D. Four.")
    plain = _question("001-1", "How many people are there", options)
    longer = _question("002-1", "How many people are there in the kitchen", options)
    index = QuestionIndex([plain, longer])
    for question in (plain, longer):
        text = first_user_text({"messages": first_messages(question)})
        assert index.find(text) is question
