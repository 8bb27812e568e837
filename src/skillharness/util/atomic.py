"""Crash-safe file writes.

Every artifact a user keeps as evidence (pools, manifests, checkpoints, cache files) is written
through here: a temp file in the same folder, fsync, ``os.replace``, fsync of the folder. A crash
at any point leaves either the old file or the new one, never a torn mix (audit P1-7, P2-1).

``durable=False`` keeps the temp file and the rename but skips both fsyncs: for files that can
always be rebuilt and are validated on read (the frame cache), where a flush per file would cost
more than the work it saves. After a crash such a file may be missing or empty, never torn into
a mix of old and new, and its reader treats anything invalid as a miss.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, BinaryIO

__all__ = [
    "atomic_open",
    "atomic_write_bytes",
    "atomic_write_files",
    "atomic_write_json",
    "atomic_write_text",
    "fsync_dir",
    "json_bytes",
    "new_mode",
    "sha256_bytes",
    "sha256_file",
]


def fsync_dir(path: Path) -> None:
    """Flush a directory entry so a completed rename survives power loss."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _about(target: Path, exc: OSError) -> OSError:
    """``exc`` told of ``target``, the path the caller named, rather than of the temp file beside it:
    the same errno (so the same subclass, ``PermissionError`` ...) and the system's reason."""
    return OSError(exc.errno, exc.strerror or str(exc), str(target))


def _umask() -> int:
    """The process umask now (a program embedding us may change it after import)."""
    try:  # Linux states it without changing it: safe while other threads create files
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    # Elsewhere the umask can only be read by setting it; restored at once.
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def new_mode(*, folder: bool = False) -> int:
    """The mode ``open``/``mkdir`` would give a new file (folder) under the process umask; the temp
    files and folders an atomic write renames into place are made 0600/0700 and need it given back,
    or an export is unreadable to every other user."""
    return (0o777 if folder else 0o666) & ~_umask()


@contextlib.contextmanager
def atomic_open(path: Path | str, *, durable: bool = True) -> Iterator[BinaryIO]:
    """Yield a binary file that replaces ``path`` only if the block finishes without error.

    An ``OSError`` of the write itself (the temp file, a write to it such as a full disk's, its flush,
    the rename) names ``path``; one the block raises that names a file of its own is left as it is.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as exc:
        raise _about(target, exc) from exc
    tmp = Path(tmp_name)
    try:
        try:
            # A replaced file keeps its mode; a new one gets the umask's, as a plain open would.
            os.fchmod(fd, target.stat().st_mode & 0o7777 if target.is_file() else new_mode())
            with os.fdopen(fd, "wb") as handle:
                yield handle
                handle.flush()
                if durable:
                    os.fsync(handle.fileno())
            os.replace(tmp, target)
        except OSError as exc:
            # A write to the temp file (a full disk raises in write() or in close, without a file
            # name), its flush or its rename: the destination's failure. An error of the block's
            # own file (a source it read) names that file, and is left as it is.
            if exc.filename is not None and exc.filename != str(tmp):
                raise
            raise _about(target, exc) from exc
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise
    if durable:
        fsync_dir(target.parent)


def atomic_write_bytes(path: Path | str, data: bytes, *, durable: bool = True) -> None:
    """Write ``data`` to ``path`` atomically (flushed to disk unless ``durable`` is false)."""
    with atomic_open(path, durable=durable) as handle:
        handle.write(data)


def atomic_write_files(files: Mapping[Path, bytes]) -> None:
    """Write several files all or none: each is written and flushed to a temp file first, and only
    when every one is on disk are they renamed into place. A failed write (a full disk) leaves every
    destination as it was and names the file that failed."""
    with contextlib.ExitStack() as stack:
        for path, data in files.items():
            handle = stack.enter_context(atomic_open(path))
            handle.write(data)
            handle.flush()  # a full disk fails here, before any file is renamed
            os.fsync(handle.fileno())


def atomic_write_text(path: Path | str, text: str) -> None:
    """Write UTF-8 ``text`` to ``path`` atomically."""
    atomic_write_bytes(path, text.encode("utf-8"))


def json_bytes(obj: Any) -> bytes:
    """``obj`` as stable, indented UTF-8 JSON with a final newline (what :func:`atomic_write_json` writes)."""
    return (json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")


def atomic_write_json(path: Path | str, obj: Any) -> bytes:
    """Write ``obj`` as stable, indented JSON atomically; return the bytes written."""
    data = json_bytes(obj)
    atomic_write_bytes(path, data)
    return data


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path | str) -> str:
    """Hex sha256 of a file, streamed so large files do not load into memory."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
