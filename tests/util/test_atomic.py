"""Atomic writes: a crash between the temp write and the replace leaves the old file intact."""

from __future__ import annotations

import hashlib
import io
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from skillharness.util import atomic
from skillharness.util.atomic import (
    atomic_open,
    atomic_write_bytes,
    atomic_write_json,
    atomic_write_text,
    sha256_bytes,
    sha256_file,
)

CHILD = textwrap.dedent(
    """
    import os, signal, sys
    from skillharness.util import atomic
    def die(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGKILL)   # the process dies after the temp file is fsynced
    atomic.os.replace = die
    atomic.atomic_write_text(sys.argv[1], "NEW CONTENT " * 1000)
    """
)


def test_p1_7_crash_between_write_and_replace_leaves_old_file(tmp_path: Path) -> None:
    target = tmp_path / "manifest.json"
    target.write_text("OLD")
    proc = subprocess.run([sys.executable, "-c", CHILD, str(target)], capture_output=True, timeout=60)
    assert proc.returncode == -9, proc.stderr.decode()
    assert target.read_text() == "OLD"


def test_exception_inside_block_keeps_old_file_and_removes_temp(tmp_path: Path) -> None:
    target = tmp_path / "pools.json"
    target.write_text("OLD")

    def crash_mid_write() -> None:
        with atomic_open(target) as handle:
            handle.write(b"half")
            raise RuntimeError("disk full")

    with pytest.raises(RuntimeError, match="disk full"):
        crash_mid_write()
    assert target.read_text() == "OLD"
    assert [p.name for p in tmp_path.iterdir()] == ["pools.json"]


def test_full_disk_during_write_keeps_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "checkpoint.json"
    target.write_text("OLD")

    def no_space(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("skillharness.util.atomic.os.fsync", no_space)
    with pytest.raises(OSError, match="No space"):
        atomic_write_text(target, "NEW")
    assert target.read_text() == "OLD"
    assert len(list(tmp_path.iterdir())) == 1


def test_json_write_is_stable_and_hashable(tmp_path: Path) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    atomic_write_json(a, {"b": 1, "a": [1, 2]})
    atomic_write_json(b, {"a": [1, 2], "b": 1})
    assert sha256_file(a) == sha256_file(b)
    assert a.read_text().startswith("{\n")


def test_missing_parent_folders_are_created(tmp_path: Path) -> None:
    target = tmp_path / "runs" / "r1" / "checkpoints" / "state.json"
    atomic_write_text(target, "NEW")
    assert target.read_text() == "NEW"


def test_json_form_is_sorted_indented_utf8_with_a_final_newline(tmp_path: Path) -> None:
    target = tmp_path / "pools.json"
    written = atomic_write_json(target, {"z": 1, "a": ["é", 2]})
    expected = '{\n  "a": [\n    "é",\n    2\n  ],\n  "z": 1\n}\n'.encode()
    assert written == expected
    assert target.read_bytes() == expected


def test_hashes_are_sha256_of_the_bytes_streamed_past_one_block(tmp_path: Path) -> None:
    data = bytes(range(256)) * 8193  # a little more than two 1 MiB blocks
    target = tmp_path / "frames.bin"
    atomic_write_bytes(target, data)
    assert sha256_bytes(data) == hashlib.sha256(data).hexdigest()
    assert sha256_file(target) == hashlib.sha256(data).hexdigest()


def test_hashing_a_file_reads_it_in_bounded_blocks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Frame caches and pools can be large: a file is hashed in 1 MiB reads, never loaded whole.
    target = tmp_path / "big.bin"
    target.write_bytes(b"x" * (3 << 20))
    sizes: list[int] = []

    class Recording(io.FileIO):
        def read(self, size: int = -1) -> bytes:
            sizes.append(size)
            return super().read(size)

    monkeypatch.setattr(atomic, "open", lambda path, mode: Recording(path, "r"), raising=False)
    assert sha256_file(target) == hashlib.sha256(b"x" * (3 << 20)).hexdigest()
    assert sizes == [1 << 20] * 4


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux's /proc, where no file can be made")
def test_a_folder_that_takes_no_file_is_an_error_naming_the_destination_not_the_temp_file() -> None:
    # Root may write anywhere a mode forbids; /proc refuses a new file to everyone.
    target = Path("/proc/skillharness-report.html")
    with pytest.raises(FileNotFoundError) as info:
        atomic_write_text(target, "NEW")
    assert info.value.filename == str(target)
    assert info.value.filename2 is None
    assert info.value.strerror == "No such file or directory"
    assert ".tmp" not in str(info.value)


def test_a_failed_rename_names_the_destination_and_leaves_no_temp_file(tmp_path: Path) -> None:
    target = tmp_path / "report.html"
    (target / "inside").mkdir(parents=True)  # a folder where the file must go
    with pytest.raises(IsADirectoryError) as info:
        atomic_write_text(target, "NEW")
    assert info.value.filename == str(target)
    assert info.value.filename2 is None
    assert ".tmp" not in str(info.value)
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]


def test_an_error_of_the_callers_own_block_is_left_as_it_is(tmp_path: Path) -> None:
    source = tmp_path / "absent.bin"
    with pytest.raises(FileNotFoundError) as info, atomic_open(tmp_path / "copy.bin") as handle:
        handle.write(source.read_bytes())
    assert info.value.filename == str(source)


def test_a_new_file_gets_the_umask_mode_and_a_replaced_file_keeps_its_own(tmp_path: Path) -> None:
    """mkstemp makes 0600: renamed into place as it is, an export or a split would be unreadable
    to every other user, and a replaced file would lose the mode its owner gave it."""
    plain = tmp_path / "plain.txt"
    plain.write_bytes(b"x")  # what open() gives under this process's umask
    fresh = tmp_path / "fresh.txt"
    atomic_write_bytes(fresh, b"x")
    assert fresh.stat().st_mode & 0o777 == plain.stat().st_mode & 0o777 == atomic.new_mode()
    kept = tmp_path / "kept.txt"
    kept.write_bytes(b"old")
    kept.chmod(0o604)
    atomic_write_bytes(kept, b"new")
    assert kept.stat().st_mode & 0o777 == 0o604


def test_a_full_disk_during_the_blocks_write_names_the_destination(tmp_path: Path) -> None:
    """A write to the temp file that fails (ENOSPC carries no file name) is the destination's
    failure; a block's own error that names its file is left as it is."""
    import errno

    target = tmp_path / "report.html"
    with pytest.raises(OSError, match="No space left") as caught, atomic.atomic_open(target):
        raise OSError(errno.ENOSPC, "No space left on device")  # as handle.write raises it
    assert caught.value.filename == str(target)
    assert caught.value.errno == errno.ENOSPC
    source = tmp_path / "missing.json"
    with pytest.raises(FileNotFoundError) as own, atomic.atomic_open(target) as handle:
        handle.write(source.read_bytes())
    assert own.value.filename == str(source)
    assert sorted(p.name for p in tmp_path.iterdir()) == []


ALL_OR_NONE_CHILD = textwrap.dedent(
    """
    import resource, signal, sys
    from pathlib import Path
    from skillharness.util.atomic import atomic_write_files
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit then fails with EFBIG
    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
    out = Path(sys.argv[1])
    try:
        atomic_write_files({out / "a.md": b"A" * 1000, out / "b.md": b"B" * 1000, out / "c.md": b"C" * 9000})
    except OSError as exc:
        print(exc.filename)
        sys.exit(3)
    """
)


def test_several_files_are_written_all_or_none_when_a_write_fails(tmp_path: Path) -> None:
    """A real write failure (the file-size limit, as a full disk refuses a write) on the third file
    leaves the first two as they were, no temp file behind, and names the file that failed."""
    (tmp_path / "a.md").write_bytes(b"old a")
    proc = subprocess.run(
        [sys.executable, "-c", ALL_OR_NONE_CHILD, str(tmp_path)], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 3, proc.stderr
    assert proc.stdout.strip() == str(tmp_path / "c.md")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.md"]
    assert (tmp_path / "a.md").read_bytes() == b"old a"
    atomic.atomic_write_files({tmp_path / "a.md": b"new a", tmp_path / "b.md": b"new b"})
    assert [(tmp_path / n).read_bytes() for n in ("a.md", "b.md")] == [b"new a", b"new b"]


def test_a_umask_changed_after_import_gives_new_files_its_mode(tmp_path: Path) -> None:
    """A program that embeds us may set its umask after importing us; new files follow it then."""
    before = os.umask(0o077)
    try:
        atomic_write_bytes(tmp_path / "private.txt", b"x")
        assert (tmp_path / "private.txt").stat().st_mode & 0o777 == 0o600 == atomic.new_mode()
    finally:
        os.umask(before)
    atomic_write_bytes(tmp_path / "shared.txt", b"x")
    assert (tmp_path / "shared.txt").stat().st_mode & 0o777 == 0o666 & ~before
