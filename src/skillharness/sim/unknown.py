"""Refusing an agent request about a question the simulator was never given.

The world holds a truth only for the questions it loaded. An answer to any other question would be
a guess passed off as the model's, and a run pointed at another questions file than the server's
would score noise without a word. So such a request is refused, naming the question it asked and
the questions the server holds. The status is 404, not 400: the harness scores a 400 as the model
refusing the request's content (a wrong answer), while a 404 is an infra error that ends the run
loudly, which is what a mismatched setup is.
"""

from __future__ import annotations

from skillharness.sim.requests import HTTPProblem
from skillharness.sim.wire import error_body

__all__ = ["UNKNOWN_QUESTION_CODE", "unknown_question"]

UNKNOWN_QUESTION_CODE = "question_not_found"
_SHOWN_CHARS = 160  # of the question's text in the error: enough to recognise it, never a whole prompt


def _asked(user_text: str) -> str:
    """The question line of the agent's first user message ("Question: ..."), else its first line."""
    lines = [line.strip() for line in user_text.splitlines() if line.strip()]
    line = next((x for x in lines if x.startswith("Question:")), lines[0] if lines else "")
    line = line.removeprefix("Question:").strip()
    return line if len(line) <= _SHOWN_CHARS else line[: _SHOWN_CHARS - 3] + "..."


def unknown_question(user_text: str, source: str, loaded: int) -> HTTPProblem:
    """The 404 answering an agent request whose question (``user_text``) is none of the ``loaded``
    questions of ``source``."""
    held = (
        f"it holds {loaded} question(s), from {source}"
        if loaded
        else "it holds no questions (start it with --questions FILE, or SimServer(questions=...))"
    )
    message = (
        f"the simulator was never given the question {_asked(user_text)!r} (no loaded question's text "
        f"and options appear in the first user message): {held}. A simulator answers only questions "
        "whose hidden truth it knows; serve the questions file the run asks from."
    )
    return HTTPProblem(404, error_body(message, "invalid_request_error", UNKNOWN_QUESTION_CODE, "messages"))
