"""var/ is 0700 and the SQLite files in it 0600: they hold password, session and token hashes.
Runs Django in a fresh subprocess on a fresh ARIA_VAR_DIR (the test process uses its own DB)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import json, os, stat, django
django.setup()
from django.conf import settings
from django.db import connection
with connection.cursor() as cursor:  # a write: SQLite creates the -wal and -shm files now
    cursor.execute("CREATE TABLE IF NOT EXISTS probe (x)")
    cursor.execute("INSERT INTO probe VALUES (1)")
var = settings.VAR_DIR
print(json.dumps({p.name: stat.S_IMODE(p.stat().st_mode) for p in [var, *var.iterdir()] if p.is_file() or p == var}))
"""


def _probe(var_dir: Path) -> dict[str, int]:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "ARIA_ENV", "SECRET_KEY")}
    env.update(
        {"DJANGO_SETTINGS_MODULE": "aria_project.settings", "ARIA_VAR_DIR": str(var_dir), "PYTHONPATH": str(ROOT)}
    )
    result = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_a_new_var_dir_is_owner_only_and_so_are_the_database_files(tmp_path: Path) -> None:
    modes = _probe(tmp_path / "var")
    assert modes.pop("var") == 0o700
    assert {"aria.sqlite3", "aria.sqlite3-wal", "dev_secret_key"} <= set(modes)
    assert {name: mode for name, mode in modes.items() if mode != 0o600} == {}


def test_an_existing_var_dir_and_database_are_tightened(tmp_path: Path) -> None:
    var = tmp_path / "var"
    _probe(var)
    var.chmod(0o755)
    for name in ("aria.sqlite3", "dev_secret_key"):
        (var / name).chmod(0o644)
    modes = _probe(var)
    assert (modes["var"], modes["aria.sqlite3"], modes["dev_secret_key"]) == (0o700, 0o600, 0o600)
    assert stat.S_IMODE((var / "aria.sqlite3").stat().st_mode) == 0o600
