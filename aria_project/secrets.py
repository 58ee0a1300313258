"""Development-only secret key, generated once per checkout and kept out of the repository."""

import secrets
from pathlib import Path


def development_secret_key(var_dir: Path) -> str:
    path = var_dir / "dev_secret_key"
    if not path.exists():
        path.write_text(secrets.token_urlsafe(50))
        path.chmod(0o600)
    return path.read_text().strip()
