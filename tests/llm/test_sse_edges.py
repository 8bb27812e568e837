"""SSE wire edge cases over real loopback HTTP, and the assembler's text repair.

Each stream here is one the SSE spec or a real server allows; a spurious error would make every
attempt fail the same way, so these go through a single :class:`EndpointClient` attempt.
"""

from __future__ import annotations

import json

import pytest
from llm_support import Reply, ScriptedServer, chunk, make_request

from skillharness.errors import FatalLLMError
from skillharness.llm.client import EndpointClient
from skillharness.llm.config import EndpointConfig, TimeoutConfig
from skillharness.llm.stream import StreamAssembler


def _data(payload: str) -> bytes:
    return f"data: {payload}\n\n".encode()


HI = chunk({"content": "hi"})
STOP = _data(chunk({}, "stop")) + b"data: [DONE]\n\n"
UTF8 = _data(
    json.dumps({"choices": [{"index": 0, "delta": {"content": "h\u00e9\U0001f600"}}]}, ensure_ascii=False)
)

STREAMS = {
    # A keep-alive event with no data line: the spec says an empty data buffer dispatches nothing.
    "event_without_data": ([b"event: ping\n\n", _data(HI), STOP], "hi"),
    # After an id: line, a second blank line must not dispatch an empty event either.
    "id_then_extra_blank_line": ([b"id: 7\n" + _data(HI) + b"\n", STOP], "hi"),
    "comments_and_crlf": ([b": keep-alive\r\n\r\n", _data(HI).replace(b"\n", b"\r\n"), STOP], "hi"),
    "multi_line_data": ([("data: " + HI.replace(", ", ",\ndata: ") + "\n\n").encode(), STOP], "hi"),
    "named_message_event": ([b"event: message\n" + _data(HI), STOP], "hi"),
    "utf8_split_across_writes": ([UTF8[:-5], UTF8[-5:], STOP], "h\u00e9\U0001f600"),
}


@pytest.mark.parametrize("name", sorted(STREAMS))
async def test_sse_edge_streams_are_one_clean_attempt(scripted: ScriptedServer, name: str) -> None:
    pieces, expected = STREAMS[name]
    scripted.push(Reply(raw=pieces))
    client = EndpointClient(EndpointConfig(base_url=scripted.base_url), TimeoutConfig(read_s=5, total_s=10))
    try:
        response = await client.complete(make_request())
    finally:
        await client.aclose()
    assert response.content == expected
    assert response.finish_reason == "stop"


def _tool_delta(arguments_json: str, first: bool) -> str:
    # ``arguments_json`` is the JSON string literal (escapes included) of one argument fragment.
    head = '"id": "c1", "function": {"name": "submit_answer", ' if first else '"function": {'
    part = '{"index": 0, ' + head + '"arguments": ' + arguments_json + "}}"
    return '{"choices": [{"index": 0, "delta": {"tool_calls": [' + part + "]}}]}"


def test_surrogate_pair_split_across_argument_deltas_is_rejoined() -> None:
    # A server that escapes non-ASCII in UTF-16 may cut an emoji between its two halves.
    assembler = StreamAssembler("ep")
    assembler.feed(_tool_delta(r'"{\"answer\": \"B \ud83d"', first=True))
    assembler.feed(_tool_delta(r'"\ude00\"}"', first=False))
    assembler.feed(chunk({}, "tool_calls"))
    assembler.feed("[DONE]")
    call = assembler.finish().tool_calls[0]
    assert call.arguments.encode("utf-8")  # no lone surrogate left: the text can be sent and stored
    assert json.loads(call.arguments) == {"answer": "B \U0001f600"}


def test_lone_surrogate_becomes_a_replacement_character() -> None:
    assembler = StreamAssembler("ep")
    assembler.feed(json.dumps({"choices": [{"index": 0, "delta": {"content": "x\ud83d"}}]}))
    assembler.feed(chunk({}, "stop"))
    assembler.feed("[DONE]")
    assert assembler.finish().content == "x\ufffd"


@pytest.mark.parametrize("extra", [{"min_p": float("nan")}, {"note": "half \ud83d"}])
async def test_a_body_that_is_not_json_is_a_fatal_error_and_never_sent(
    scripted: ScriptedServer, extra: dict[str, object]
) -> None:
    client = EndpointClient(EndpointConfig(base_url=scripted.base_url), TimeoutConfig(read_s=5, total_s=10))
    try:
        with pytest.raises(FatalLLMError, match="not valid JSON"):
            await client.complete(make_request(extra_body=extra))
    finally:
        await client.aclose()
    assert scripted.requests == []
