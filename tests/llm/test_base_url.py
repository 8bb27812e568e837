"""``llm.endpoints.*.base_url``: a URL of another scheme is told so, one without a scheme how to write it."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from skillharness.llm.config import EndpointConfig


@pytest.mark.parametrize(
    ("url", "scheme"), [("ftp://x", "ftp"), ("WS://host:8000/v1", "ws"), ("file:///srv/v1", "file")]
)
def test_a_url_of_another_scheme_names_its_scheme(url: str, scheme: str) -> None:
    with pytest.raises(ValidationError) as info:
        EndpointConfig(base_url=url)
    message = str(info.value)
    assert f"{url!r} has scheme {scheme!r}; an endpoint is http:// or https://" in message
    assert "needs a scheme" not in message


@pytest.mark.parametrize("url", ["127.0.0.1:8000/v1", "localhost:8000/v1", "gpu-a/v1"])
def test_a_url_without_a_scheme_is_shown_with_one(url: str) -> None:
    # 'localhost:8000/v1' parses with the scheme 'localhost': it is still a URL that lacks one.
    with pytest.raises(ValidationError) as info:
        EndpointConfig(base_url=url)
    assert f"{url!r} needs a scheme: write http://{url} or https://{url}" in str(info.value)


def test_http_and_https_urls_are_kept() -> None:
    assert EndpointConfig(base_url=" https://gpu-a:8000/v1 ").base_url == "https://gpu-a:8000/v1"
