"""Atomic file writes: a reader sees the old file or the new one, never half of one."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any


@contextmanager
def atomic_open(
    path: str | Path, mode: str = "w", encoding: str | None = "utf-8", *, private: bool = False
) -> Iterator[IO[Any]]:
    """Open a temporary file beside ``path``; on clean exit it replaces ``path``, else it vanishes.

    ``private`` files (those holding a secret) are 0600 from their first byte on.
    """
    target = Path(path)
    fd, tmp = _temp_beside(target, private=private)
    try:
        with os.fdopen(fd, mode, encoding=None if "b" in mode else encoding) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def atomic_write_text(path: str | Path, text: str, *, private: bool = False) -> None:
    with atomic_open(path, private=private) as handle:
        handle.write(text)


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    with atomic_open(path, "wb") as handle:
        handle.write(data)


def json_text(data: Any, *, indent: int | None = 2) -> str:
    """How goldloop writes a JSON file (UTF-8 as is, a final newline)."""
    return json.dumps(data, ensure_ascii=False, indent=indent) + "\n"


def atomic_write_json(
    path: str | Path, data: Any, *, indent: int | None = 2, private: bool = False
) -> None:
    """Serialise fully in memory first, so a value that cannot be encoded never touches the disk."""
    atomic_write_text(path, json_text(data, indent=indent), private=private)


def atomic_write_together(files: Mapping[Path, str | bytes]) -> None:
    """Write several files (text, or bytes as they are) as one commit: each is staged (written
    and fsynced) beside its target first, and only when all are staged are they renamed into
    place. A failure while staging (an unwritable folder, a full disk) leaves every target as it
    was, and names the target.
    """
    staged: list[tuple[Path, Path]] = []
    try:
        for target, text in files.items():
            try:
                stage = _stage(target, text)
            except OSError as exc:
                raise OSError(exc.errno, exc.strerror, str(target)) from None
            staged.append((stage, target))
    except BaseException:
        for stage, _ in staged:
            stage.unlink(missing_ok=True)
        raise
    for stage, target in staged:
        os.replace(stage, target)


def _temp_beside(target: Path, *, private: bool = False) -> tuple[int, Path]:
    """A new temporary file in ``target``'s folder (created when missing): its descriptor, path."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    if not private:
        # mkstemp creates 0600; give the file the mode a plain open() would (0666 less the umask).
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(fd, 0o666 & ~umask)
    return fd, Path(name)


def _stage(target: Path, content: str | bytes) -> Path:
    """``content`` fsynced in a temporary file beside ``target`` (text as UTF-8)."""
    fd, stage = _temp_beside(target)
    data = content.encode("utf-8") if isinstance(content, str) else content
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException:
        stage.unlink(missing_ok=True)
        raise
    return stage


def atomic_write_files(folder: str | Path, files: dict[str, bytes]) -> None:
    """Write many files into ``folder``: all are staged in a temporary folder beside it, then each
    is renamed into place, so a reader sees every file whole, old or new, and a failure before the
    renames leaves the folder as it was.

    Unlike :func:`atomic_open`, the staged files are not fsynced one by one: a BRAT export writes
    two files per document, and an fsync each made it 3× slower than writing them (10,000
    documents). A crash of the process still never leaves a half-written file.
    """
    target = Path(folder)
    target.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp"))
    try:
        for name, data in files.items():
            (staging / name).write_bytes(data)
        for name in files:
            os.replace(staging / name, target / name)
    finally:
        for leftover in staging.iterdir():
            leftover.unlink()
        staging.rmdir()


def output_problem(path: str | Path, *, folder: bool = False) -> str | None:
    """Why ``path`` could not be written (as a file, or as a folder with ``folder``), else None.

    Checked before long work starts, so a run never ends on an unwritable output.
    """
    target = Path(path)
    if target.exists():
        if folder and not target.is_dir():
            return "is a file, not a folder"
        if not folder and target.is_dir():
            return "is a folder, not a file"
    parent = target if folder and target.is_dir() else target.parent
    existing = next((p for p in (parent, *parent.parents) if p.exists()), None)
    if existing is None:  # pragma: no cover - the root always exists
        return "has no existing parent folder"
    if not existing.is_dir():
        return f"{existing} is a file, not a folder"
    if not os.access(existing, os.W_OK | os.X_OK):
        return f"folder {existing} is not writable"
    return None


def same_file(a: str | Path, b: str | Path) -> bool:
    """Whether two paths name one file (resolved, so links and ``..`` count)."""
    first, second = Path(a), Path(b)
    try:
        if first.exists() and second.exists():
            return os.path.samefile(first, second)
    except OSError:
        pass
    return first.resolve() == second.resolve()
