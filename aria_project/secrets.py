"""Development-only secret key, generated once per checkout and kept out of the repository."""

import os
import secrets
from pathlib import Path

from core.private_files import restrict_to_owner


def development_secret_key(var_dir: Path) -> str:
    path = var_dir / "dev_secret_key"
    if not path.exists():
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)  # never readable by others
        with os.fdopen(fd, "w") as handle:
            handle.write(secrets.token_urlsafe(50))
    restrict_to_owner(path, 0o600)
    return path.read_text().strip()
