"""Process trees in tests: every process a run started (children, grandchildren, ...), and which
of them still run after it ended, read from ``/proc`` (Linux)."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")


@dataclass(frozen=True)
class Proc:
    """One process, told apart from a later process that reuses its pid by its start time."""

    pid: int
    started: int  # clock ticks after boot
    args: str


def _stat(pid: int) -> tuple[str, int] | None:
    """(state, start time) of a process, or None when it is gone."""
    try:
        fields = (PROC / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return None
    return fields[0], int(fields[19])


def describe(pid: int) -> Proc | None:
    """The process with this pid now, or None."""
    stat = _stat(pid)
    try:
        args = (PROC / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
    except (FileNotFoundError, ProcessLookupError):
        return None
    return None if stat is None else Proc(pid, stat[1], args)


def children(pid: int) -> set[int]:
    """Pids of the direct children of every thread of ``pid``."""
    found: set[int] = set()
    try:
        tasks = list((PROC / str(pid) / "task").iterdir())
    except FileNotFoundError:
        return found
    for task in tasks:
        try:
            found.update(int(c) for c in (task / "children").read_text().split())
        except FileNotFoundError:
            continue
    return found


def descendants(pid: int) -> set[Proc]:
    """Every process below ``pid`` now (children, their children, ...)."""
    found: set[Proc] = set()
    todo = list(children(pid))
    while todo:
        child = todo.pop()
        described = describe(child)
        if described is not None:
            found.add(described)
            todo.extend(children(child))
    return found


def alive(proc: Proc) -> bool:
    """Whether this very process still runs (a zombie has ended; a reused pid is another process)."""
    stat = _stat(proc.pid)
    return stat is not None and stat[0] != "Z" and stat[1] == proc.started


def end(procs: list[Proc]) -> None:
    """SIGKILL these processes (a failed test leaves no orphan of its own behind)."""
    for proc in procs:
        if alive(proc):
            with contextlib.suppress(ProcessLookupError):
                os.kill(proc.pid, signal.SIGKILL)


def survivors(procs: set[Proc], within_s: float = 10.0) -> list[Proc]:
    """The processes still running after up to ``within_s`` seconds of waiting for them to end."""
    deadline = time.monotonic() + within_s
    while True:
        running = sorted((p for p in procs if alive(p)), key=lambda p: p.pid)
        if not running or time.monotonic() > deadline:
            return running
        time.sleep(0.1)
