"""Embedded mode (`python3 dev.py up` → `manage.py runaria`, SQLite, in-memory broker): work that a
second process (a shell, `manage.py simulate`) dispatches is recorded in the database and the
running system's relay hands it to its embedded worker. Before, it went to the second process's
own in-memory broker, where no worker runs, and was lost."""

from __future__ import annotations

import os
import socket
import sqlite3
import subprocess
import sys
import urllib.request
from pathlib import Path

from tests.conftest import wait_until

ROOT = Path(__file__).resolve().parents[2]
SECOND_PROCESS = """
from core.dispatch import dispatch
from django.db import transaction
with transaction.atomic():
    dispatch("core.ping", args=["from-a-second-process"], key="second-process-ping")
"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _query(var: Path, sql: str) -> list[tuple]:
    with sqlite3.connect(var / "aria.sqlite3") as conn:
        return conn.execute(sql).fetchall()


def _healthy(port: str) -> bool:
    try:
        return urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2).status == 200
    except OSError:
        return False


def test_work_dispatched_by_a_second_process_runs_in_the_embedded_worker(tmp_path: Path) -> None:
    var = tmp_path / "var"
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "ARIA_EMBEDDED_WORKER")}
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "aria_project.settings",
            "ARIA_VAR_DIR": str(var),
            "ARIA_PORT": str(_free_port()),
            "ARIA_ENV": "development",
        }
    )
    subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v0"], cwd=ROOT, env=env, check=True)
    server = subprocess.Popen(
        [sys.executable, "manage.py", "runaria", "--no-simulator"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        assert wait_until(lambda: _healthy(env["ARIA_PORT"]), timeout=60), "runaria did not answer /healthz"
        second = subprocess.run(
            [sys.executable, "manage.py", "shell", "-c", SECOND_PROCESS],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert second.returncode == 0, second.stderr
        ran = wait_until(
            lambda: _query(var, "select target_id from core_auditrecord where action = 'core.ping'"), timeout=30
        )
        assert ran == [("from-a-second-process",)]
        [(attempts, sent)] = _query(
            var,
            "select attempts, sent_at is not null from core_dispatchintent where dedupe_key = 'second-process-ping'",
        )
        assert sent == 1 and attempts == 1  # one send, by the running system's relay
    finally:
        server.terminate()
        output, _ = server.communicate(timeout=30)
    assert "Traceback" not in output, output
