"""Run bookkeeping: the watchdog that fails runs left `running` past their timeout."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from assistant.choices import RunStatus
from assistant.conf import get_config
from assistant.models import Run


def run_fail(*, run: Run, error: str) -> Run:
    run.status = RunStatus.FAILED
    run.error = error[:2000]
    run.finished = timezone.now()
    run.save(update_fields=["status", "error", "finished"])
    return run


def runs_expire_stale(*, grace_seconds: float = 30) -> int:
    """Fail every run still `running` after run_timeout_seconds (+ grace): its worker died."""
    limit = get_config().run_timeout_seconds + grace_seconds
    cutoff = timezone.now() - timedelta(seconds=limit)
    return Run.objects.filter(status=RunStatus.RUNNING, created__lt=cutoff).update(
        status=RunStatus.FAILED,
        error=f"watchdog: still running after {limit:.0f}s (run_timeout_seconds); the worker stopped.",
        finished=timezone.now(),
    )
