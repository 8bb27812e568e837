"""``media_io_kwargs``: its own request field, sent as the top-level body key, and in the cache key
only when set, so every request without it (every ``images`` request) keeps the key and the body
it had before the field existed."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from skillharness.llm import EndpointConfig, FrameTransport, LLMConfig, MediaConfig, request_body
from skillharness.llm.cache.key import KEY_VERSION, cache_key
from skillharness.llm.roles import Role
from skillharness.llm.types import ChatRequest, SamplingParams
from skillharness.util.canonical import content_hash

text = st.text(max_size=12)
parts = st.lists(
    st.one_of(
        st.builds(lambda t: {"type": "text", "text": t}, text),
        st.builds(lambda u: {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64," + u}}, text),
    ),
    max_size=4,
)
messages = st.lists(
    st.fixed_dictionaries(
        {"role": st.sampled_from(["system", "user", "assistant"]), "content": text | parts}
    ),
    min_size=1,
    max_size=4,
)
extras = st.dictionaries(st.sampled_from(["top_a", "min_p"]), st.integers(0, 5), min_size=1)
requests = st.builds(
    ChatRequest,
    model=st.sampled_from(["m", "Qwen/Qwen2.5-VL-7B-Instruct"]),
    messages=messages.map(tuple),
    role=st.just(Role.AGENT),
    tool_choice=st.none() | st.just("auto"),
    sampling=st.builds(
        SamplingParams,
        temperature=st.none() | st.floats(0, 2, allow_nan=False),
        max_tokens=st.none() | st.integers(1, 4096),
        seed=st.none() | st.integers(0, 2**31),
    ),
    extra_body=st.none()
    | st.dictionaries(st.sampled_from(["top_a", "min_p"]), st.integers(0, 5), min_size=1),
    sample_idx=st.integers(0, 5),
)
kwargs = st.fixed_dictionaries(
    {
        "video": st.fixed_dictionaries(
            {"num_frames": st.integers(-1, 64).filter(bool)},
            optional={"fps": st.floats(0.1, 30), "frames_indices": st.lists(st.integers(0, 999), max_size=5)},
        )
    }
)


def _key_before_the_field(request: ChatRequest, salt: str | None) -> str:
    """The cache key as it was computed before ``media_io_kwargs`` existed (key version 1)."""
    sampling = request.sampling.model_dump(mode="json")
    return content_hash(
        {
            "v": KEY_VERSION,
            "model": request.model,
            "messages": list(request.messages),
            "tools": list(request.tools) if request.tools is not None else None,
            "tool_choice": request.tool_choice,
            "response_format": request.response_format,
            "sampling": {name: sampling.get(name) for name in SamplingParams.model_fields},
            "extra_body": request.extra_body,
            "sample_idx": request.sample_idx,
            "salt": salt,
        }
    )


@settings(max_examples=150, deadline=None)
@given(request=requests, salt=st.none() | text)
def test_a_request_without_media_keeps_its_key_and_its_body(request: ChatRequest, salt: str | None) -> None:
    assert cache_key(request, salt) == _key_before_the_field(request, salt)
    assert "media_io_kwargs" not in request_body(request)


@settings(max_examples=150, deadline=None)
@given(request=requests, first=kwargs, second=kwargs)
def test_media_io_kwargs_enter_the_key_and_the_body(
    request: ChatRequest, first: dict[str, Any], second: dict[str, Any]
) -> None:
    with_first = request.model_copy(update={"media_io_kwargs": first})
    with_second = request.model_copy(update={"media_io_kwargs": second})
    assert cache_key(with_first, None) != cache_key(request, None)
    assert (cache_key(with_first, None) == cache_key(with_second, None)) == (
        json.dumps(first, sort_keys=True) == json.dumps(second, sort_keys=True)
    )
    body = request_body(with_first)
    assert body["media_io_kwargs"] == first
    assert list(body)[-2:] == ["stream", "stream_options"]  # a top-level key, beside the others


def test_media_io_kwargs_has_one_home() -> None:
    with pytest.raises(ValidationError, match="its own field"):
        ChatRequest(
            model="m",
            messages=({"role": "user", "content": "x"},),
            role=Role.AGENT,
            extra_body={"media_io_kwargs": {"video": {"num_frames": 8}}},
        )


def test_the_replicas_must_take_frames_one_way() -> None:
    frames = MediaConfig(transport=FrameTransport.VIDEO_FRAMES)
    one = EndpointConfig(base_url="http://a:1/v1", name="gpu-a", media=frames)
    other = EndpointConfig(base_url="http://b:1/v1", name="gpu-b")
    with pytest.raises(ValidationError, match=r"gpu-a: \{'transport': 'video_frames'\}; gpu-b: images"):
        LLMConfig(endpoints=(one, other))
    same = LLMConfig(endpoints=(one, other.model_copy(update={"media": frames})))
    assert same.media == frames
    assert LLMConfig().media.transport is FrameTransport.IMAGES


@pytest.mark.parametrize(
    ("values", "needle"),
    [
        ({"url_base": "http://files:9/v/"}, "only apply to transport video_url"),
        ({"transport": "video_frames", "fps": 2.0}, "only apply to transport video_url"),
        ({"transport": "video_url", "url_base": "files:9/v"}, r"not an http\(s\) URL with a host"),
        ({"transport": "video_url", "fps": 0}, "greater than 0"),
        ({"transport": "video_stream"}, "video_frames"),
    ],
)
def test_media_settings_are_checked(values: dict[str, Any], needle: str) -> None:
    with pytest.raises(ValidationError, match=needle):
        MediaConfig.model_validate(values)
