"""With Redis, an unacked message (acks_late) is re-delivered after visibility_timeout: it must
outlast the longest task, or Redis hands a running task to a second worker (kombu's default is
an hour, which stranded killed work for that long; the sweeper now re-drives it sooner)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROBE = """
import json, django
django.setup()
from aria_project.celery import app
app.loader.import_default_modules()
limits = {name: task.time_limit for name, task in app.tasks.items() if not name.startswith("celery.")}
print(json.dumps({
    "options": app.conf.broker_transport_options,
    "acks_late": app.conf.task_acks_late,
    "reject_on_worker_lost": app.conf.task_reject_on_worker_lost,
    "scheduler": app.conf.beat_scheduler,
    "limits": limits,
    "beat": sorted(entry["task"] for entry in app.conf.beat_schedule.values()),
}))
"""


def test_redis_visibility_timeout_outlasts_every_task_and_acks_stay_late(tmp_path: Path) -> None:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "aria_project.settings", "ARIA_VAR_DIR": str(tmp_path)}
    env["REDIS_URL"] = "redis://127.0.0.1:6390/0"  # only read, never connected to
    result = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    conf = json.loads(result.stdout.strip().splitlines()[-1])
    missing = [name for name, limit in conf["limits"].items() if limit is None]
    assert not missing, f"tasks without a hard time limit: {missing}"
    longest = max(conf["limits"].values())
    assert conf["options"]["visibility_timeout"] > longest
    assert conf["acks_late"] is True and conf["reject_on_worker_lost"] is True
    assert conf["scheduler"] == "core.beat:LeaderScheduler"
    assert {"core.sweep", "core.relay_dispatch"} <= set(conf["beat"])
