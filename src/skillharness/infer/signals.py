"""SIGTERM stops a run the way Ctrl-C does: interrupted, its last batch flushed, exit 143.

Schedulers and ``docker stop`` send SIGTERM, whose default action kills the process without
running any cleanup, which would leave the run "running" in the store forever. Here it cancels
the run's task instead, so the same ``finally`` blocks run as for Ctrl-C.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Iterator

from skillharness.errors import RunError

__all__ = ["SIGTERM_EXIT", "Terminated", "cancel_on_sigterm"]

SIGTERM_EXIT = 128 + signal.SIGTERM  # 143: what a shell reports for a process ended by SIGTERM


class Terminated(RunError):
    """The run was stopped by SIGTERM (its status is ``interrupted``); carries the run id."""


@contextlib.contextmanager
def cancel_on_sigterm() -> Iterator[list[bool]]:
    """Inside a running loop: SIGTERM cancels the current task. Yields ``[received]``."""
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    received = [False]

    def on_term() -> None:
        received[0] = True
        if task is not None:
            task.cancel()

    try:
        loop.add_signal_handler(signal.SIGTERM, on_term)
        installed = True
    except (NotImplementedError, RuntimeError, ValueError):  # not the main thread: nothing to catch
        installed = False
    try:
        yield received
    finally:
        if installed:
            loop.remove_signal_handler(signal.SIGTERM)
