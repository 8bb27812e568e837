"""Helpers for the simulator tests: a small question set and agent episodes over HTTP."""

from __future__ import annotations

import json
from typing import Any

from skillharness.agent.normalize import normalize_answer
from skillharness.data.questions import Question
from skillharness.llm.roles import TOOL_PARAMETERS, TOOL_SUBMIT_ANSWER
from skillharness.sim import SimConfig

# The world of these tests' ``sim`` fixture, which each module asks for with
# ``pytest.mark.sim_world(SIM_TEST_WORLD, questions="questions")``.
SIM_TEST_WORLD = SimConfig(seed=7)

TASK_TYPES = ("Counting Problem", "OCR Problems", "Action Recognition", "Temporal Reasoning")


def make_questions(per_task: int = 10) -> list[Question]:
    """Distinct questions over four task types, answers spread over the letters."""
    questions = []
    for t_index, task_type in enumerate(TASK_TYPES):
        for i in range(per_task):
            n = t_index * per_task + i
            questions.append(
                Question(
                    video_id=f"{n:03d}",
                    duration=("short", "medium", "long")[n % 3],
                    videoID=f"vid{n:03d}",
                    question_id=f"{n:03d}-1",
                    task_type=task_type,
                    question=f"In clip number {n}, what does the presenter hold up after item {i}?",
                    options=tuple(f"{letter}. Thing {letter.lower()}{n}x{i}" for letter in "ABCD"),
                    answer="ABCD"[n % 4],
                )
            )
    return questions


def tools(descriptions: dict[str, str] | None = None) -> list[dict[str, Any]]:
    descriptions = descriptions or {}
    return [
        {
            "type": "function",
            "function": {
                "name": name,
                "description": descriptions.get(name, f"The {name} tool."),
                "parameters": params,
            },
        }
        for name, params in TOOL_PARAMETERS.items()
    ]


def first_messages(
    question: Question, system: str = "You answer questions about videos."
) -> list[dict[str, Any]]:
    user = f"Question: {question.question}\nOptions:\n" + "\n".join(question.options) + "\nDuration: short"
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": [{"type": "text", "text": user}]},
    ]


def tool_result(call_id: str, name: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": f"(result of {name})"}


def run_episode(
    client: Any,
    model: str,
    question: Question,
    system: str,
    sample_idx: int,
    max_steps: int = 6,
    stream: bool = False,
) -> tuple[str | None, list[str]]:
    """Play one agent episode with the openai client; (normalized letter or None, tool names called)."""
    messages = first_messages(question, system)
    called: list[str] = []
    for _ in range(max_steps):
        response = client.chat.completions.create(
            model=model,
            messages=messages,
            tools=tools(),
            temperature=0.7,
            extra_body={"sample_idx": sample_idx},
        )
        message = response.choices[0].message
        if not message.tool_calls:
            return None, called
        call = message.tool_calls[0]
        called.append(call.function.name)
        if call.function.name == TOOL_SUBMIT_ANSWER:
            raw = json.loads(call.function.arguments).get("answer")
            return normalize_answer(raw, question.letters, question.options).letter, called
        messages.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": call.id,
                        "type": "function",
                        "function": {"name": call.function.name, "arguments": call.function.arguments},
                    }
                ],
            }
        )
        messages.append(tool_result(call.id, call.function.name))
    return None, called
