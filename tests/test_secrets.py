"""Files goldloop writes that hold a secret are 0600; no secret reaches what it prints."""

from __future__ import annotations

from pathlib import Path


def test_the_embedded_servers_files_with_the_token_are_0600(label_studio) -> None:
    home: Path = label_studio.home
    for name in ("server.json", "credentials.json"):
        path = home / name
        assert label_studio.token in path.read_text(), f"{name} no longer holds the token?"
        assert path.stat().st_mode & 0o777 == 0o600, f"{name} is {oct(path.stat().st_mode)}"
    assert label_studio.token not in (home / "label-studio.log").read_text(errors="replace")
    # Label Studio's own database (with the token) is in a folder only its owner can enter.
    assert (home / "data").stat().st_mode & 0o777 == 0o700
