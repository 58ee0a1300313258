"""Local state (var/: the SQLite database with password, session and token hashes, the dev secret
key, demo credentials) is readable by its owner only. No Django imports: settings uses it too."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

SQLITE_SUFFIXES = ("", "-wal", "-shm", "-journal")


def restrict_to_owner(path: Path, mode: int) -> None:
    """chmod `path` to `mode` when it exists, is ours and grants group/other anything."""
    try:
        st = path.stat()
    except FileNotFoundError:
        return
    if st.st_uid == os.getuid() and st.st_mode & 0o077:
        path.chmod(mode)


def private_dir(path: Path) -> Path:
    """Create `path` 0700 (parents as usual), or tighten an existing directory of ours to 0700."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    restrict_to_owner(path, 0o700)
    return path


def protect_sqlite(sender: Any, connection: Any, **kwargs: Any) -> None:
    """`connection_created` receiver: the SQLite database file (and its -wal / -shm, which SQLite
    creates with the database file's mode) becomes 0600."""
    if connection.vendor != "sqlite":
        return
    name = str(connection.settings_dict.get("NAME") or "")
    if not name or name == ":memory:" or name.startswith("file:"):
        return
    for suffix in SQLITE_SUFFIXES:
        restrict_to_owner(Path(name + suffix), 0o600)
