"""Wire format, checked with the official openai client (max_retries=0) as the oracle of validity."""

from __future__ import annotations

import json

import httpx
import pytest
from sim_support import SIM_TEST_WORLD, first_messages, tools

from skillharness.llm.roles import RESPONSE_SCHEMAS, Role, response_format

pytestmark = pytest.mark.sim_world(SIM_TEST_WORLD, questions="questions")


def test_models_lists_the_served_name(client, sim):
    names = [m.id for m in client.models.list().data]
    assert names == list(sim.config.model_names)


def test_non_streamed_agent_turn_is_a_tool_call_with_usage(client, sim, questions):
    response = client.chat.completions.create(
        model=sim.model_name, messages=first_messages(questions[0]), tools=tools()
    )
    choice = response.choices[0]
    assert choice.finish_reason == "tool_calls"
    (call,) = choice.message.tool_calls
    assert call.function.name == "get_frames"
    args = json.loads(call.function.arguments)
    assert set(args) == {"start_s", "end_s", "count"}
    assert args["start_s"] <= args["end_s"]
    assert response.usage.prompt_tokens > 0
    assert response.usage.completion_tokens > 0


def test_streamed_tool_call_deltas_are_vllm_shaped_and_end_with_done(sim, questions):
    body = {
        "model": sim.model_name,
        "messages": first_messages(questions[0]),
        "tools": tools(),
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    with httpx.stream("POST", f"{sim.base_url}/chat/completions", json=body, timeout=10) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        lines = [line for line in response.iter_lines() if line]
    assert lines[-1] == "data: [DONE]"
    chunks = [json.loads(line.removeprefix("data: ")) for line in lines[:-1]]
    deltas = [c["choices"][0]["delta"] for c in chunks if c["choices"]]
    calls = [d["tool_calls"][0] for d in deltas if d.get("tool_calls")]
    head, *fragments = calls
    assert head["index"] == 0
    assert head["id"].startswith("call_")
    assert head["type"] == "function"
    assert head["function"] == {"name": "get_frames", "arguments": ""}
    assert fragments
    assert all(set(f) == {"index", "function"} and set(f["function"]) == {"arguments"} for f in fragments)
    assert json.loads("".join(f["function"]["arguments"] for f in fragments))["count"] >= 1
    assert chunks[-2]["choices"][0]["finish_reason"] == "tool_calls"
    assert chunks[-1]["choices"] == []
    assert chunks[-1]["usage"]["total_tokens"] > 0


def test_streamed_reply_assembles_with_openai_client(client, sim, questions):
    stream = client.chat.completions.create(
        model=sim.model_name,
        messages=first_messages(questions[1]),
        tools=tools(),
        stream=True,
        stream_options={"include_usage": True},
    )
    name, arguments, finish, usage = "", "", None, None
    for chunk in stream:
        if chunk.usage:
            usage = chunk.usage
        for choice in chunk.choices:
            finish = choice.finish_reason or finish
            for call in choice.delta.tool_calls or []:
                name += call.function.name or ""
                arguments += call.function.arguments or ""
    assert name == "get_frames"
    assert json.loads(arguments)["count"] >= 1
    assert finish == "tool_calls"
    assert usage is not None
    assert usage.completion_tokens > 0


def test_stream_without_include_usage_still_reports_usage_on_the_final_chunk(sim, questions):
    body = {
        "model": sim.model_name,
        "messages": first_messages(questions[0]),
        "tools": tools(),
        "stream": True,
    }
    with httpx.stream("POST", f"{sim.base_url}/chat/completions", json=body, timeout=10) as response:
        lines = [line for line in response.iter_lines() if line]
    final = json.loads(lines[-2].removeprefix("data: "))
    assert final["choices"][0]["finish_reason"] == "tool_calls"
    assert final["usage"]["prompt_tokens"] > 0


@pytest.mark.parametrize("role", [Role.JUDGE, Role.EVOLVE, Role.RANK, Role.MOMENTUM, Role.CONSOLIDATE])
def test_json_roles_answer_valid_json_with_the_schema_keys(client, sim, role, questions):
    q = questions[0]
    text = (
        f"{q.question}\n"
        + "\n".join(q.options)
        + "\n<current_document>\n# Skill\n- Look closely.\n</current_document>"
    )
    response = client.chat.completions.create(
        model=sim.model_name,
        messages=[{"role": "user", "content": text}],
        response_format=response_format(role),
    )
    payload = json.loads(response.choices[0].message.content)
    schema = RESPONSE_SCHEMAS[role]
    assert set(schema["required"]) <= set(payload) <= set(schema["properties"])
    assert response.choices[0].finish_reason == "stop"
    assert response.usage.total_tokens > 0


def test_plain_chat_without_role_says_it_is_a_simulator(client, sim):
    response = client.chat.completions.create(
        model=sim.model_name, messages=[{"role": "user", "content": "hi"}]
    )
    assert "simulat" in response.choices[0].message.content
