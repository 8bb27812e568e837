"""Worker processes that die with the process that owns their pool, however it ends (even SIGKILL).

Used by the frame-decoding pool (:mod:`skillharness.video.workers`) and by SimLab's pool of
training runs (``benchmarks/simlab/efficiency.py``): a killed owner must leave no process behind.
"""

from __future__ import annotations

import functools
import os
import select
import signal
import threading
import time
from collections.abc import Callable
from multiprocessing import forkserver

__all__ = ["exit_with_owner", "start_forkserver_ignoring_sigint"]

# A worker's exit status when it ends because the pool's owner is gone (nobody reads it).
_OWNER_GONE_EXIT = 70
# Without pidfds, how often (seconds) a worker checks that the pool's owner still exists.
_OWNER_POLL_S = 1.0


def exit_with_owner(owner_pid: int) -> None:
    """Worker initializer: end this worker the moment the process that owns the pool is gone.

    Nothing else would end it when the owner is killed. A forkserver's worker has the forkserver,
    not the owner, as its parent, so a parent-death signal does not fire when the owner dies (and
    the forkserver's own death must not stop workers that still serve a live owner); a spawned
    worker busy with a long job reads its queue only after the job. A waiting worker holds both
    ends of its queue's pipe, so it never reads an end of file either. Left alive, it also holds
    the pipes of the forkserver and of the resource tracker open, and all outlive the owner.
    """
    wait: Callable[[], object]
    try:
        pidfd = os.pidfd_open(owner_pid)
    except ProcessLookupError:  # the owner died before this worker started
        os._exit(_OWNER_GONE_EXIT)
    except (AttributeError, OSError):  # no pidfds (not Linux, or a kernel before 5.3)
        wait = functools.partial(_poll_until_gone, owner_pid)
    else:
        # A pidfd becomes readable when its process exits (before it is reaped, unlike kill(0)).
        watch = select.poll()
        watch.register(pidfd, select.POLLIN)
        wait = watch.poll
    threading.Thread(target=_exit_after, args=(wait,), name="owner-watch", daemon=True).start()


def _poll_until_gone(pid: int) -> None:
    while True:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(_OWNER_POLL_S)


def _exit_after(wait: Callable[[], object]) -> None:
    wait()
    os._exit(_OWNER_GONE_EXIT)  # at once: a decode in progress has nobody to return to


def start_forkserver_ignoring_sigint() -> None:
    """Start this process's forkserver (if it is not running yet) with SIGINT ignored.

    Ctrl-C signals the terminal's whole process group, workers included. The owner handles it and
    ends its pool; a worker took it as KeyboardInterrupt, printed a traceback (one more from the
    pool's manager thread, broken by the worker's death) and never said anything useful. An ignored
    signal stays ignored across exec, and Python keeps it so at start-up, so the forkserver and
    every worker it forks ignore it from their first instruction (SIGTERM and SIGKILL still end
    them). Signal handlers are set in the main thread only: elsewhere it starts as it is.
    """
    if threading.current_thread() is not threading.main_thread():
        forkserver.ensure_running()
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # for the forkserver's few ms of start
    try:
        forkserver.ensure_running()
    finally:
        signal.signal(signal.SIGINT, previous)
