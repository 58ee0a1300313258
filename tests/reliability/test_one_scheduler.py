"""One scheduler: two `celery beat` processes on one Redis — only the leader publishes, the other
logs that it is standing by, and takes over when the leader is killed."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from tests.conftest import wait_until

ROOT = Path(__file__).resolve().parents[2]
SENDING = re.compile(r"Sending due task")


def _beat(tmp_path: Path, name: str, session: str) -> tuple[subprocess.Popen, Path]:
    log = tmp_path / f"{name}.log"
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "aria_project.settings_test",
        "ARIA_TEST_WORKER": "1",
        "ARIA_TEST_SESSION": session,  # its own queue and lock name: no other run's beat interferes
        "ARIA_VAR_DIR": str(tmp_path),
        "ARIA_BEAT_LOCK_TTL_SECONDS": "4",
        "ARIA_DISPATCH_RELAY_INTERVAL": "1",
    }
    command = [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "aria_project",
        "beat",
        "-l",
        "info",
        "-s",
        str(tmp_path / f"{name}-schedule"),
    ]
    with log.open("w") as out:
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    return process, log


def _sent(log: Path) -> int:
    return len(SENDING.findall(log.read_text(errors="replace")))


@pytest.mark.integration
def test_two_beats_publish_once_and_the_standby_takes_over_when_the_leader_dies(tmp_path: Path) -> None:
    import redis

    session = f"beat-{uuid.uuid4().hex[:8]}"
    first, first_log = _beat(tmp_path, "first", session)
    assert wait_until(lambda: _sent(first_log) >= 1, timeout=60), first_log.read_text()
    second, second_log = _beat(tmp_path, "second", session)
    try:
        assert wait_until(lambda: "standing by" in second_log.read_text(), timeout=60), second_log.read_text()
        before = _sent(first_log)
        assert wait_until(lambda: _sent(first_log) >= before + 3, timeout=30)
        assert _sent(second_log) == 0, second_log.read_text()  # the standby published nothing

        first.send_signal(signal.SIGKILL)  # the leader dies without releasing its lease
        first.wait(10)
        assert wait_until(lambda: _sent(second_log) >= 1, timeout=30), second_log.read_text()
        assert "leader lease" in second_log.read_text() and "acquired" in second_log.read_text()
    finally:
        for process in (first, second):
            if process.poll() is None:
                process.terminate()
                process.wait(10)
        redis.Redis.from_url(os.environ["REDIS_URL"]).delete(f"aria-test-{session}")
