"""skillharness: evolve a video-QA agent's text, accept only what a statistical gate proves."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("skillharness")
except PackageNotFoundError:  # running from a source tree without an install
    __version__ = "0.0.0+unknown"
