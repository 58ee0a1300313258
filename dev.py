#!/usr/bin/env python3
"""ARIA's two commands on a fresh machine with only Python 3.11+:

python3 dev.py up      # venv, install, migrate, seed the demo, run web + worker + beat + simulator
python3 dev.py test    # venv, install, run the test suite (extra args go to pytest)
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
PY = VENV / "bin" / "python"
REQUIREMENTS = ROOT / "requirements.txt"
STAMP = VENV / ".requirements.sha256"


def ensure_venv() -> None:
    if sys.version_info < (3, 11):
        sys.exit("ARIA needs Python 3.11 or newer.")
    if not PY.exists():
        print("Creating virtual environment in .venv …", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    digest = hashlib.sha256(REQUIREMENTS.read_bytes()).hexdigest()
    if not STAMP.exists() or STAMP.read_text() != digest:
        print("Installing requirements …", flush=True)
        subprocess.run([PY, "-m", "pip", "install", "-q", "--upgrade", "pip"], check=True)
        subprocess.run([PY, "-m", "pip", "install", "-q", "-r", REQUIREMENTS], check=True)
        STAMP.write_text(digest)


def manage(*args: str) -> None:
    subprocess.run([PY, ROOT / "manage.py", *args], check=True, cwd=ROOT)


def up(args: list[str]) -> int:
    ensure_venv()
    manage("migrate", "--noinput")
    manage("seed_demo")
    # `runaria` runs daphne + the embedded Celery worker and beat + the simulator; Ctrl-C stops all.
    os.execv(PY, [str(PY), str(ROOT / "manage.py"), "runaria", *args])
    return 0


def test(args: list[str]) -> int:
    ensure_venv()
    return subprocess.run([PY, "-m", "pytest", *args], cwd=ROOT).returncode


def main() -> int:
    commands = {"up": up, "test": test}
    if len(sys.argv) < 2 or sys.argv[1] not in commands:
        print(__doc__)
        return 2
    return commands[sys.argv[1]](sys.argv[2:])


if __name__ == "__main__":
    sys.exit(main())
