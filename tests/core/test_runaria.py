"""`manage.py runaria` end to end: serves HTTP, runs a beat-scheduled task in the embedded worker,
and stops cleanly on SIGINT/SIGTERM with exit code 0."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Beat schedules core.ping twice a second, so the test can see the embedded worker run a task.
SETTINGS = """
from aria_project.settings import *  # noqa: F403

CELERY_BEAT_SCHEDULE = {"ping": {"task": "core.ping", "schedule": 0.5, "args": ["from-beat"]}}
"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_for(predicate, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if predicate():
                return True
        except Exception:
            pass
        time.sleep(0.2)
    return False


@pytest.fixture(scope="module")
def migrated_db(tmp_path_factory) -> Path:
    """One migrated SQLite file for the module; each test runs on its own copy."""
    var = tmp_path_factory.mktemp("runaria-template")
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env.update({"DJANGO_SETTINGS_MODULE": "aria_project.settings", "ARIA_VAR_DIR": str(var)})
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v0"], cwd=ROOT, env=env, check=True, timeout=180
    )
    return var / "aria.sqlite3"


@pytest.fixture
def runaria_env(tmp_path: Path, migrated_db: Path) -> dict[str, str]:
    (tmp_path / "runaria_test_settings.py").write_text(SETTINGS)
    (tmp_path / "var").mkdir()
    shutil.copy(migrated_db, tmp_path / "var" / "aria.sqlite3")
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "ARIA_EMBEDDED_WORKER")}
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "runaria_test_settings",
            "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)]),
            "ARIA_VAR_DIR": str(tmp_path / "var"),
            "ARIA_PORT": str(_free_port()),
            "ARIA_ENV": "development",
        }
    )
    return env


def _ping_count(var_dir: str) -> int:
    with sqlite3.connect(Path(var_dir) / "aria.sqlite3") as conn:
        return conn.execute("select count(*) from core_auditrecord where action = 'core.ping'").fetchone()[0]


@pytest.mark.parametrize("stop_signal", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_runaria_serves_runs_beat_tasks_and_stops_cleanly(runaria_env: dict[str, str], stop_signal: int) -> None:
    port = runaria_env["ARIA_PORT"]
    proc = subprocess.Popen(
        [sys.executable, "manage.py", "runaria", "--no-simulator"],
        cwd=ROOT,
        env=runaria_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        # Given the system is up
        assert _wait_for(
            lambda: urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2).status == 200, 60
        ), "runaria did not answer /healthz"
        # Then beat's scheduled task runs in the embedded worker (it writes audit records)
        assert _wait_for(lambda: _ping_count(runaria_env["ARIA_VAR_DIR"]) >= 2, 20), "no beat task ran"
        # When it is asked to stop
        started = time.monotonic()
        proc.send_signal(stop_signal)
        output, _ = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    # Then everything stops promptly with exit code 0
    assert proc.returncode == 0, output
    assert time.monotonic() - started < 20
    assert f"http://localhost:{port}/" in output
    assert "demo_credentials.txt" in output
    assert "Stopped." in output
    assert "Traceback" not in output, output


def test_runaria_rejects_an_unknown_scenario_before_starting(runaria_env: dict[str, str]) -> None:
    result = subprocess.run(
        [sys.executable, "manage.py", "runaria", "--scenario", "no-such-scenario"],
        cwd=ROOT,
        env=runaria_env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1
    assert "Unknown scenario 'no-such-scenario'" in result.stderr


def test_runaria_starts_the_services_apps_register(runaria_env: dict[str, str]) -> None:
    # sentinel registers its demo simulator with core.background; the kernel names no app
    port = runaria_env["ARIA_PORT"]
    proc = subprocess.Popen(
        [sys.executable, "manage.py", "runaria", "--scenario", "p02-bearing"],
        cwd=ROOT,
        env=runaria_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert _wait_for(
            lambda: urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2).status == 200, 60
        ), "runaria did not answer /healthz"
        proc.send_signal(signal.SIGTERM)
        output, _ = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, output
    assert "simulate: scenario p02-bearing" in output, output
    assert "Traceback" not in output, output
