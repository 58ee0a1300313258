"""LOGGING: every record is printed once, through root's formatted handler. Runs Django's own
logging setup in a fresh subprocess (the test process's logging is pytest's)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import logging, django
django.setup()
from django.test import Client
Client().get("/no-such-page/")  # django.request: WARNING Not Found
logging.getLogger("workorders.receivers").warning("app warning")
logging.getLogger("mcp.server.streamable_http").info("Terminating session: None")
logging.getLogger("mcp.server.streamable_http").warning("mcp warning")
"""


def test_each_warning_is_logged_once_and_mcp_session_chatter_is_quiet(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("SECRET_KEY", "ALLOWED_HOSTS", "ARIA_ENV", "LOG_LEVEL")}
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "aria_project.settings",
            "ARIA_VAR_DIR": str(tmp_path),
            "DJANGO_DEBUG": "1",
            "PYTHONPATH": str(ROOT),
        }
    )
    result = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert [line for line in lines if "Not Found: /no-such-page/" in line] == [
        next(line for line in lines if "WARNING django.request: Not Found: /no-such-page/" in line)
    ], lines
    assert sum("app warning" in line for line in lines) == 1, lines
    assert sum("mcp warning" in line for line in lines) == 1, lines
    assert not [line for line in lines if "Terminating session" in line], lines
