"""The SSE assembler: what makes a stream complete (audit P1-2), and tool-call deltas."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from llm_support import chunk, ok_frames

from skillharness.errors import FatalLLMError, LLMError, TransientLLMError
from skillharness.llm.stream import StreamAssembler
from skillharness.llm.toolcall import apply_content_tool_call, extract_tool_call
from skillharness.llm.types import ChatResponse


def feed(frames: list[str]) -> StreamAssembler:
    assembler = StreamAssembler("ep")
    for frame in frames:
        assembler.feed(frame)
    return assembler


def test_complete_stream_assembles_content_and_usage() -> None:
    response = feed([*ok_frames("hello world", prompt=9, completion=4), "[DONE]"]).finish()
    assert response.content == "hello world"
    assert response.finish_reason == "stop"
    assert (response.usage.prompt_tokens, response.usage.completion_tokens) == (9, 4)
    assert response.endpoint == "ep"


def test_tool_call_deltas_id_and_name_first_then_argument_fragments() -> None:
    frames = [
        chunk(
            {
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "call_a",
                        "type": "function",
                        "function": {"name": "get_frames", "arguments": ""},
                    }
                ]
            }
        ),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"start_s": 1,'}}]}),
        chunk({"tool_calls": [{"index": 1, "id": "call_b", "function": {"name": "get_subtitles"}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": ' "end_s": 2, "count": 3}'}}]}),
        chunk({"tool_calls": [{"index": 1, "function": {"arguments": '{"start_s": 0, "end_s": 9}'}}]}),
        chunk({}, "tool_calls"),
        "[DONE]",
    ]
    calls = feed(frames).finish().tool_calls
    assert [(c.id, c.name) for c in calls] == [("call_a", "get_frames"), ("call_b", "get_subtitles")]
    assert json.loads(calls[0].arguments) == {"start_s": 1, "end_s": 2, "count": 3}
    assert json.loads(calls[1].arguments) == {"start_s": 0, "end_s": 9}


def test_missing_done_is_a_truncated_stream() -> None:
    with pytest.raises(TransientLLMError, match="without \\[DONE\\]") as info:
        feed(ok_frames()).finish()
    assert info.value.context["kind"] == "truncated_stream"


def test_done_without_finish_reason_is_truncated() -> None:
    with pytest.raises(TransientLLMError) as info:
        feed([chunk({"content": "half"}), "[DONE]"]).finish()
    assert info.value.context["kind"] == "truncated_stream"


def test_vllm_style_error_frame_then_done_is_an_error() -> None:
    error = json.dumps({"error": {"message": "engine died", "type": "InternalServerError", "code": 500}})
    with pytest.raises(TransientLLMError, match="engine died") as info:
        feed([chunk({"content": "a"}), error, "[DONE]"]).finish()
    assert info.value.context["kind"] == "error_frame"


def test_llamacpp_style_error_frame_without_done_is_an_error() -> None:
    error = json.dumps({"error": {"code": 500, "message": "slot unavailable", "type": "server_error"}})
    with pytest.raises(TransientLLMError, match="slot unavailable"):
        feed([chunk({"content": "a"}), error]).finish()


def test_error_frame_with_client_error_code_is_fatal() -> None:
    error = json.dumps({"error": {"code": 400, "message": "context too long"}})
    with pytest.raises(FatalLLMError):
        feed([error, "[DONE]"]).finish()


def test_error_frame_wins_even_after_a_finish_reason() -> None:
    error = json.dumps({"error": {"message": "late failure"}})
    with pytest.raises(TransientLLMError):
        feed([*ok_frames(), error, "[DONE]"]).finish()


def test_malformed_json_chunk_is_transient() -> None:
    with pytest.raises(TransientLLMError) as info:
        feed([chunk({"content": "a"}), '{"choices": [{"delta": {"content": "b"'])
    assert info.value.context["kind"] == "malformed_chunk"


def test_named_error_event_is_an_error() -> None:
    assembler = feed(ok_frames())
    assembler.feed_error("upstream gone")
    assembler.feed("[DONE]")
    with pytest.raises(TransientLLMError, match="upstream gone"):
        assembler.finish()


ALLOWED = {"submit_answer", "get_frames"}


@pytest.mark.parametrize(
    "content",
    [
        '{"name": "submit_answer", "arguments": {"answer": "B"}}',
        '{"name": "submit_answer", "parameters": {"answer": "B"}}',
        '{"name": "submit_answer", "arguments": "{\\"answer\\": \\"B\\"}"}',
        '```json\n{"name": "submit_answer", "arguments": {"answer": "B"}}\n```',
        '<tool_call>\n{"name": "submit_answer", "arguments": {"answer": "B"}}\n</tool_call>',
        '{"tool_calls": [{"function": {"name": "submit_answer", "arguments": {"answer": "B"}}}]}',
        '[{"type": "function", "function": {"name": "submit_answer", "arguments": {"answer": "B"}}}]',
    ],
)
def test_extractor_accepts_common_bare_json_shapes(content: str) -> None:
    call = extract_tool_call(content, ALLOWED)
    assert call is not None
    assert call.name == "submit_answer"
    assert json.loads(call.arguments) == {"answer": "B"}


@pytest.mark.parametrize(
    "content",
    [
        None,
        "",
        "The answer is B.",
        '{"name": "rm_rf", "arguments": {}}',  # not an offered tool
        '{"name": "submit_answer", "arguments": ["B"]}',  # arguments not an object
        '{"name": "submit_answer", "arguments": "not json"}',
        '{"answer": "B"}',  # no name
        '[{"name": "submit_answer", "arguments": {}}, {"name": "get_frames", "arguments": {}}]',  # two calls
        '{"name": "submit_answer", "arguments": {"answer": "B"}} and some prose',
        '{"name": "submit_answer", "arguments": {"answer": "B"}, "verdict": "x"}',  # unexpected key
    ],
)
def test_extractor_refuses_anything_ambiguous(content: str | None) -> None:
    assert extract_tool_call(content, ALLOWED) is None


def test_apply_moves_content_call_into_tool_calls_only_when_tools_were_offered() -> None:
    tools = [{"type": "function", "function": {"name": "submit_answer"}}]
    response = ChatResponse(
        content='{"name": "submit_answer", "arguments": {"answer": "C"}}', finish_reason="stop"
    )
    moved = apply_content_tool_call(response, tools)
    assert moved.content is None
    assert moved.finish_reason == "tool_calls"
    assert moved.tool_calls[0].name == "submit_answer"
    assert apply_content_tool_call(response, None) is response


@pytest.mark.parametrize(
    "frame",
    [
        '{"choices": [1, 2]}',
        '{"choices": [{"index": "first", "delta": {}}]}',
        '{"choices": [{"delta": {"tool_calls": ["x"]}}]}',
        '{"choices": [{"delta": {"tool_calls": [{"index": 0, "function": "f"}]}}]}',
        '{"choices": {"0": {}}}',
        '{"choices": [{"index": Infinity}]}',
    ],
)
def test_chunks_of_the_wrong_shape_are_transient_never_a_crash(frame: str) -> None:
    with pytest.raises(TransientLLMError) as info:
        feed([frame])
    assert info.value.context["kind"] == "malformed_chunk"


_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.just(float("inf"))
    | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                [
                    "choices",
                    "delta",
                    "index",
                    "tool_calls",
                    "function",
                    "usage",
                    "content",
                    "finish_reason",
                    "id",
                    "name",
                    "arguments",
                    "model",
                ]
            ),
            inner,
            max_size=4,
        )
    ),
    max_leaves=15,
)


@settings(max_examples=200, deadline=None)
@given(frames=st.lists(_json.map(json.dumps), max_size=4), done=st.booleans())
def test_any_json_stream_ends_in_a_response_or_our_error(frames: list[str], done: bool) -> None:
    try:
        response = feed([*frames, "[DONE]"] if done else frames).finish()
    except LLMError:
        return
    assert done
    assert response.finish_reason


def test_content_as_a_list_of_parts_and_arguments_as_an_object_are_read_not_dropped() -> None:
    """Shapes some OpenAI-compatible servers send. Dropped, the model's answer would score as its
    own parse error, silently."""
    parts = [{"type": "text", "text": "The answer "}, {"type": "image_url"}, {"type": "text", "text": "is A"}]
    content = feed([chunk({"content": parts}), chunk({}, "stop"), "[DONE]"]).finish()
    assert content.content == "The answer is A"
    call = {"index": 0, "id": "c", "function": {"name": "submit_answer", "arguments": {"answer": "A"}}}
    tool = feed([chunk({"tool_calls": [call]}), chunk({}, "tool_calls"), "[DONE]"]).finish()
    assert json.loads(tool.tool_calls[0].arguments) == {"answer": "A"}


@pytest.mark.parametrize("odd", [42, {"text": "A"}, ["A"]])
def test_content_of_any_other_shape_is_a_garbled_chunk_not_an_empty_answer(odd: object) -> None:
    with pytest.raises(TransientLLMError, match="chunk of unexpected shape"):
        feed([chunk({"content": odd})])


@pytest.mark.parametrize(
    "usage",
    [
        {"prompt_tokens": -5, "completion_tokens": 3},
        {"prompt_tokens": 1e20},
        {"prompt_tokens": 2.5},
        {"prompt_tokens": "many"},
    ],
)
def test_token_counts_that_are_not_counts_leave_the_answer_and_drop_the_usage(
    usage: dict[str, object],
) -> None:
    """A server's garbage usage once crashed the run recording the answer (and, cached, its resume)."""
    frames = [
        chunk({"content": "A"}),
        chunk({}, "stop"),
        json.dumps({"choices": [], "usage": usage}),
        "[DONE]",
    ]
    response = feed(frames).finish()
    assert response.content == "A"
    assert (response.usage.prompt_tokens, response.usage.completion_tokens) == (0, 0)
