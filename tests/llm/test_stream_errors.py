"""The assembler's verdicts, example by example: error events, odd tool-call deltas, what counts."""

from __future__ import annotations

import json
from typing import Any

import pytest
from llm_support import chunk, ok_frames

from skillharness.errors import FatalLLMError, TransientLLMError
from skillharness.llm.stream import StreamAssembler


def feed(frames: list[str]) -> StreamAssembler:
    assembler = StreamAssembler("ep")
    for frame in frames:
        assembler.feed(frame)
    return assembler


def tool_delta(index: int | None = 0, **part: Any) -> str:
    call = {"index": index, **part} if index is not None else part
    return chunk({"tool_calls": [call]})


def test_an_error_event_with_a_client_error_code_is_fatal_with_its_status() -> None:
    assembler = feed(ok_frames())
    assembler.feed_error(json.dumps({"error": {"code": 401, "message": "invalid api key"}}))
    assembler.feed("[DONE]")
    with pytest.raises(FatalLLMError, match=r"error frame \(code 401\): invalid api key") as info:
        assembler.finish()
    assert info.value.context["status"] == 401
    assert info.value.context["kind"] == "error_frame"


def test_an_error_event_whose_body_is_the_error_itself_keeps_its_code() -> None:
    assembler = StreamAssembler("ep")
    assembler.feed_error(json.dumps({"code": 503, "message": "overloaded"}))
    with pytest.raises(TransientLLMError, match="overloaded") as info:
        assembler.finish()
    assert info.value.context["status"] == 503


def test_an_error_event_that_is_not_json_is_transient_without_a_status() -> None:
    assembler = StreamAssembler("ep")
    assembler.feed_error("upstream gone")
    with pytest.raises(TransientLLMError, match="error frame: upstream gone") as info:
        assembler.finish()
    assert info.value.context["status"] is None
    assert not isinstance(info.value, FatalLLMError)


def test_an_error_event_that_is_a_json_list_is_still_our_error() -> None:
    assembler = StreamAssembler("ep")
    assembler.feed_error("[1, 2]")
    with pytest.raises(TransientLLMError, match=r"error frame: \[1, 2\]"):
        assembler.finish()


def test_the_first_error_frame_is_the_one_reported() -> None:
    first = json.dumps({"error": {"code": 400, "message": "first"}})
    second = json.dumps({"error": {"code": 500, "message": "second"}})
    assembler = feed([first, second])
    assembler.feed_error("third")
    with pytest.raises(FatalLLMError, match="first"):
        assembler.finish()


def test_an_error_frame_message_is_cut_at_300_characters() -> None:
    error = json.dumps({"error": {"message": "x" * 1000, "code": 500}})
    with pytest.raises(TransientLLMError) as info:
        feed([error, "[DONE]"]).finish()
    assert str(info.value).endswith("error frame: " + "x" * 300)


def test_an_error_frame_without_a_message_reports_its_body() -> None:
    error = json.dumps({"error": {"code": 429, "type": "rate_limited"}})
    with pytest.raises(TransientLLMError, match="rate_limited") as info:
        feed([error]).finish()
    assert info.value.context["status"] == 429


def test_a_tool_call_without_a_function_name_is_a_transient_malformed_chunk() -> None:
    frames = [tool_delta(id="call_a", function={"arguments": "{}"}), chunk({}, "tool_calls"), "[DONE]"]
    with pytest.raises(TransientLLMError, match="tool call 0 has no function name") as info:
        feed(frames).finish()
    assert info.value.context["kind"] == "malformed_chunk"


def test_a_tool_call_with_an_empty_name_is_a_transient_malformed_chunk() -> None:
    frames = [tool_delta(id="c", function={"name": "", "arguments": "{}"}), chunk({}, "tool_calls"), "[DONE]"]
    with pytest.raises(TransientLLMError) as info:
        feed(frames).finish()
    assert info.value.context["kind"] == "malformed_chunk"


@pytest.mark.parametrize("bad_id", [7, "", None, ["x"]])
def test_a_tool_call_id_that_is_not_a_nonempty_string_gets_a_generated_one(bad_id: object) -> None:
    frames = [
        tool_delta(id=bad_id, function={"name": "get_frames", "arguments": "{}"}),
        chunk({}, "tool_calls"),
    ]
    response = feed([*frames, "[DONE]"]).finish()
    assert [(c.id, c.name, c.arguments) for c in response.tool_calls] == [("call_0", "get_frames", "{}")]


def test_the_first_id_and_name_of_a_tool_call_stick_and_arguments_of_no_json_shape_are_garbled() -> None:
    frames = [
        tool_delta(id="call_a", function={"name": "get_frames", "arguments": '{"a":'}),
        tool_delta(id="call_b", function={"name": "other", "arguments": ""}),
        tool_delta(function={"arguments": " 1}"}),
        chunk({}, "tool_calls"),
        "[DONE]",
    ]
    (call,) = feed(frames).finish().tool_calls
    assert (call.id, call.name, call.arguments) == ("call_a", "get_frames", '{"a": 1}')
    # Neither a JSON string nor an object: dropped, the call would score as the model's parse error.
    with pytest.raises(TransientLLMError, match="chunk of unexpected shape"):
        feed([tool_delta(id="call_b", function={"name": "other", "arguments": 5})])


def test_tool_call_parts_without_an_index_are_placed_by_their_position() -> None:
    both = chunk(
        {
            "tool_calls": [
                {"id": "a", "function": {"name": "first", "arguments": "{}"}},
                {"id": "b", "function": {"name": "second", "arguments": "[]"}},
            ]
        }
    )
    response = feed([both, chunk({}, "tool_calls"), "[DONE]"]).finish()
    assert [(c.id, c.name, c.arguments) for c in response.tool_calls] == [
        ("a", "first", "{}"),
        ("b", "second", "[]"),
    ]


def test_tool_calls_come_out_in_index_order() -> None:
    frames = [
        tool_delta(2, id="late", function={"name": "b", "arguments": ""}),
        tool_delta(1, id="early", function={"name": "a", "arguments": ""}),
        chunk({}, "tool_calls"),
        "[DONE]",
    ]
    assert [c.id for c in feed(frames).finish().tool_calls] == ["early", "late"]


def test_only_the_first_choice_is_assembled() -> None:
    other = json.dumps({"choices": [{"index": 1, "delta": {"content": "OTHER"}, "finish_reason": "length"}]})
    response = feed([chunk({"content": "mine"}), other, chunk({}, "stop"), "[DONE]"]).finish()
    assert response.content == "mine"
    assert response.finish_reason == "stop"


def test_a_later_chunk_without_finish_reason_keeps_the_earlier_one() -> None:
    response = feed([chunk({"content": "a"}, "length"), chunk({}, None), "[DONE]"]).finish()
    assert response.finish_reason == "length"


def test_model_usage_and_empty_content() -> None:
    frames = [
        chunk({}, "stop"),
        json.dumps({"choices": [], "usage": {"prompt_tokens": None, "completion_tokens": 4}}),
        json.dumps({"choices": [], "model": ""}),
        " [DONE] ",
    ]
    response = feed(frames).finish()
    assert response.content is None
    assert response.model == "scripted"
    assert (response.usage.prompt_tokens, response.usage.completion_tokens) == (0, 4)
    assert response.tool_calls == ()


def test_a_usage_count_that_is_missing_is_zero() -> None:
    usage = json.dumps({"choices": [], "usage": {"prompt_tokens": 6}})
    response = feed([chunk({"content": "a"}, "stop"), usage, "[DONE]"]).finish()
    assert (response.usage.prompt_tokens, response.usage.completion_tokens) == (6, 0)


def test_a_usage_that_is_not_an_object_is_ignored() -> None:
    response = feed([chunk({"content": "a"}, "stop", usage=[1, 2]), "[DONE]"]).finish()
    assert (response.usage.prompt_tokens, response.usage.completion_tokens) == (0, 0)


def test_frames_after_done_are_ignored_and_not_counted() -> None:
    error = json.dumps({"error": {"code": 500, "message": "late"}})
    assembler = feed([*ok_frames("hi"), "[DONE]", error, "not json"])
    assert assembler.chunks == 4
    assert assembler.finish().content == "hi"


def test_a_truncated_stream_says_how_many_chunks_arrived() -> None:
    with pytest.raises(TransientLLMError, match="after 2 chunks"):
        feed([chunk({"content": "a"}), chunk({"content": "b"})]).finish()


@pytest.mark.parametrize("frame", ["[1, 2]", '"text"', "3"])
def test_a_chunk_that_is_not_an_object_is_transient(frame: str) -> None:
    with pytest.raises(TransientLLMError, match="chunk is not an object") as info:
        feed([frame])
    assert info.value.context["kind"] == "malformed_chunk"
