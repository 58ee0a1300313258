"""Run bookkeeping: the watchdog that fails runs left `running` past their timeout; the agent runs
a session turn caused (by its correlation id)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.utils import timezone

from assistant.choices import RunStatus
from assistant.conf import get_config
from assistant.models import Run
from core.models import AgentRun


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


OFFLINE_ENGINE = "fake"  # the offline demo engine's name (core.agents.engines.fake)


def last_agent_run_id() -> int:
    """The newest AgentRun id now: a turn's own runs are those after it (see turn_agent_runs)."""
    return AgentRun.objects.order_by("-id").values_list("id", flat=True).first() or 0


def turn_agent_runs(*, correlation_id: str, after_id: int) -> dict[str, Any]:
    """The agent runs a session turn caused (its correlation id, started after `after_id`), for the
    turn's details: which agents ran on which engine, and whether the offline demo engine answered."""
    rows = list(
        AgentRun.objects.filter(correlation_id=correlation_id, pk__gt=after_id)
        .order_by("id")
        .values("id", "agent", "engine", "model", "status")[:50]
    )
    return {
        "correlation_id": correlation_id,
        "agent_runs": rows,
        "engines": sorted({r["engine"] for r in rows}),
        "offline": any(r["engine"] == OFFLINE_ENGINE for r in rows),
    }
