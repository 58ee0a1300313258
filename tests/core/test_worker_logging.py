"""`celery worker/beat -l info` log what an SRE needs (settings keep the `celery` logger at
WARNING for the web process, which silenced them): tasks received / succeeded with ids and run
times, beat's due tasks; ARIA_LOG_FORMAT=json prints one JSON object per line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import wait_until

ROOT = Path(__file__).resolve().parents[2]

# What `celery worker -l info` does at start-up (Celery sends setup_logging with the -l level),
# then the records Celery's worker, tracer and beat emit for a task.
PROBE = """
import logging, django
django.setup()
import aria_project.celery  # noqa: F401  (connects ARIA's setup_logging receiver)
from celery.signals import setup_logging
level = {level!r}
if level:
    setup_logging.send(sender=None, loglevel=level, logfile=None, format="", colorize=False)
logging.getLogger("celery.worker.strategy").info("Task core.ping[abc-123] received")
logging.getLogger("celery.app.trace").info("Task core.ping[abc-123] succeeded in 0.012s: 'x'")
logging.getLogger("celery.beat").info("Scheduler: Sending due task core-sweep (core.sweep)")
"""


def _run(tmp_path: Path, level: str | None, log_format: str = "plain") -> list[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("LOG_LEVEL", "ARIA_ENV", "SECRET_KEY", "ALLOWED_HOSTS")}
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "aria_project.settings",
            "ARIA_VAR_DIR": str(tmp_path),
            "ARIA_LOG_FORMAT": log_format,
            "PYTHONPATH": str(ROOT),
        }
    )
    result = subprocess.run(
        [sys.executable, "-c", PROBE.format(level=level)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return [line for line in result.stderr.splitlines() if "abc-123" in line or "Sending due task" in line]


def test_worker_and_beat_at_info_log_received_succeeded_and_due_tasks(tmp_path: Path) -> None:
    lines = _run(tmp_path, "INFO")
    assert any("INFO celery.worker.strategy: Task core.ping[abc-123] received" in line for line in lines), lines
    assert any("succeeded in 0.012s" in line for line in lines), lines
    assert any("Sending due task core-sweep" in line for line in lines), lines


def test_the_web_process_keeps_celery_quiet(tmp_path: Path) -> None:
    assert _run(tmp_path, None) == []


def test_json_log_format_prints_one_object_per_line(tmp_path: Path) -> None:
    lines = _run(tmp_path, "INFO", log_format="json")
    records = [json.loads(line) for line in lines]
    received = next(r for r in records if r["message"].endswith("received"))
    assert received["level"] == "INFO" and received["logger"] == "celery.worker.strategy" and received["time"]


def test_an_unknown_log_format_is_refused_at_start(tmp_path: Path) -> None:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "aria_project.settings", "ARIA_VAR_DIR": str(tmp_path)}
    env["ARIA_LOG_FORMAT"] = "xml"
    result = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert result.returncode != 0 and "ARIA_LOG_FORMAT must be plain or json" in result.stderr


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
def test_a_real_worker_at_info_logs_each_task_with_its_id_and_run_time(celery_worker) -> None:
    from aria_project.celery import app as celery_app

    result = celery_app.send_task("core.ping", args=["logged"])
    received = f"Task core.ping[{result.id}] received"
    assert wait_until(lambda: received in celery_worker.log_tail(400), timeout=30), celery_worker.log_tail()
    assert wait_until(lambda: f"Task core.ping[{result.id}] succeeded in" in celery_worker.log_tail(400), timeout=30)
