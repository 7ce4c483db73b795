"""Atomic writes: private files, and the checks of an output before any work."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from goldloop.files.atomic import (
    atomic_write_files,
    atomic_write_json,
    atomic_write_together,
    output_problem,
    same_file,
)


def test_a_private_file_is_0600_even_over_a_readable_one(tmp_path: Path) -> None:
    path = tmp_path / "secret.json"
    path.write_text("{}")
    path.chmod(0o644)
    atomic_write_json(path, {"token": "t"}, private=True)
    assert path.stat().st_mode & 0o777 == 0o600
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_output_problems(tmp_path: Path) -> None:
    a_file = tmp_path / "file.txt"
    a_file.write_text("x")
    assert output_problem(tmp_path / "new" / "deeper" / "out.json") is None
    assert output_problem(tmp_path) == "is a folder, not a file"
    assert output_problem(a_file / "out.json") == f"{a_file} is a file, not a folder"
    assert output_problem(a_file / "sub" / "out.json") == f"{a_file} is a file, not a folder"
    assert output_problem(a_file, folder=True) == "is a file, not a folder"
    assert output_problem(tmp_path / "new-dir", folder=True) is None


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write into a read-only folder")
def test_a_read_only_folder_is_an_output_problem(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    try:
        assert output_problem(locked / "out.json") == f"folder {locked} is not writable"
    finally:
        locked.chmod(0o700)


def test_same_file_sees_through_links_and_dots(tmp_path: Path) -> None:
    real = tmp_path / "in.csv"
    real.write_text("x")
    (tmp_path / "link.csv").symlink_to(real)
    assert same_file(tmp_path / "link.csv", real)
    assert same_file(tmp_path / "sub" / ".." / "in.csv", real)
    assert not same_file(tmp_path / "other.csv", real)


def test_atomic_write_files_renames_whole_files_and_leaves_no_staging(tmp_path: Path) -> None:
    folder = tmp_path / "brat"
    folder.mkdir()
    (folder / "a.txt").write_bytes(b"old")
    (folder / "keep.txt").write_bytes(b"mine")
    atomic_write_files(folder, {"a.txt": b"new\r\n", "b.ann": b"T1"})
    assert (folder / "a.txt").read_bytes() == b"new\r\n"  # bytes: no newline translation
    assert (folder / "b.ann").read_bytes() == b"T1"
    assert (folder / "keep.txt").read_bytes() == b"mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["brat"]


def test_atomic_write_files_failing_while_staging_changes_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "brat"
    folder.mkdir()
    (folder / "a.txt").write_bytes(b"old")
    with pytest.raises(OSError):
        atomic_write_files(folder, {"a.txt": b"new", "missing/b.ann": b"T1"})
    assert (folder / "a.txt").read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["brat"]


def test_files_written_together_are_all_new(tmp_path: Path) -> None:
    gold, sidecar = tmp_path / "gold.json", tmp_path / "sub" / "gold.json.verification.json"
    gold.write_text("old")
    atomic_write_together({gold: "new gold", sidecar: "new sidecar"})
    assert (gold.read_text(), sidecar.read_text()) == ("new gold", "new sidecar")
    assert sorted(p.name for p in tmp_path.rglob("*")) == sorted(
        ["gold.json", "sub", "gold.json.verification.json"]
    )


def test_bytes_written_together_are_kept_as_they_are(tmp_path: Path) -> None:
    report, chart = tmp_path / "effect.json", tmp_path / "effect.png"
    png = b"\x89PNG\r\n\x1a\n\x00\xff\r\n"  # not UTF-8, and line ends that must stay
    atomic_write_together({report: "{}\n", chart: png})
    assert (report.read_text(), chart.read_bytes()) == ("{}\n", png)


def test_files_written_together_fail_as_one_and_name_the_target(tmp_path: Path) -> None:
    gold, sidecar = tmp_path / "gold.json", tmp_path / "gold.json.verification.json"
    gold.write_text("old gold")
    sidecar.write_text("old sidecar")
    (tmp_path / "a-file").write_text("x")
    unwritable = tmp_path / "a-file" / "mirror.json"  # its folder is a file: staging fails
    with pytest.raises(OSError) as failed:
        atomic_write_together({gold: "new", sidecar: "new", unwritable: "new"})
    assert failed.value.filename == str(unwritable)
    assert (gold.read_text(), sidecar.read_text()) == ("old gold", "old sidecar")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["a-file", "gold.json", "gold.json.verification.json"]
    )
