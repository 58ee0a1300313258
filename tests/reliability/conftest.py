import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta

import pytest
from django.utils import timezone

from core.leases import HOST
from core.models import WorkLease
from tests.workorders import factories as f


@pytest.fixture
def plant(db):
    """P-02 with a vibration ramp, its KB and failure history (what the Investigator reads)."""
    cell = f.make_cell("P-02")
    vibration = f.make_signal(cell)
    f.ramp(vibration)
    f.make_kb(cell)
    f.make_history(cell)
    return cell


def dead_pid() -> int:
    """The pid of a process that has exited (a worker killed with -9 leaves exactly this)."""
    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid


def lease_of_killed_worker(key: str) -> WorkLease:
    """A lease a killed worker left behind: not expired, but its holder process is gone."""
    now = timezone.now()
    return WorkLease.objects.create(
        key=key, holder=f"{HOST}:{dead_pid()}", token="killed", acquired_at=now, expires_at=now + timedelta(minutes=3)
    )


@contextmanager
def messages_lost() -> Iterator[None]:
    """Dispatches made inside go nowhere: this process's broker is an in-memory one with no worker
    (what a lost message looks like from the database: an intent nobody delivered)."""
    from celery import Celery

    from aria_project.celery import app as aria_app

    nowhere = Celery("aria-messages-lost", set_as_current=False)
    nowhere.config_from_object("django.conf:settings", namespace="CELERY")
    nowhere.conf.broker_url = "memory://localhost/"
    nowhere.conf.task_always_eager = False
    nowhere.set_current()
    try:
        yield
    finally:
        aria_app.set_current()
