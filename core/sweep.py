"""The sweeper: every long-running item has an owner that re-drives it.

Apps register *reapers* from their `AppConfig.ready()` (`register_reaper("workorders.stranded",
fn)`); the beat task `core.sweep` calls each with a bounded batch size. A reaper finds work stuck
past its deadline and re-dispatches it (through `core.dispatch`, idempotently) or ends it with
a recorded reason, and returns how many items it touched. The kernel's own reapers end orphaned
agent runs, seal audit records left unsealed, and prune delivered dispatch intents and expired leases.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from core.audit import audit_seal
from core.dispatch import dispatch_prune
from core.leases import leases_prune
from core.models import AgentRun

logger = logging.getLogger(__name__)

Reaper = Callable[[int], int]
_reapers: dict[str, Reaper] = {}
SWEEP_BATCH = 50


def register_reaper(name: str, reaper: Reaper) -> None:
    """Register (or replace) a reaper: `reaper(limit) -> items touched`."""
    _reapers[name] = reaper


def registered_reapers() -> dict[str, Reaper]:
    return dict(_reapers)


def agent_run_grace() -> timedelta:
    return timedelta(seconds=float(getattr(settings, "ARIA_SWEEP_GRACE_SECONDS", 30.0)))


def agent_runs_abandon(
    *, reason: str, subject: tuple[str, str] | None = None, agent: str | None = None, limit: int = SWEEP_BATCH
) -> list[int]:
    """End `running` agent runs as `abandoned` with a reason: those past their wall timeout + grace,
    or (given a subject) every running one of that subject, whose worker is known to be gone.
    Guarded in the UPDATE, so a run that finished meanwhile keeps its real outcome."""
    running = AgentRun.objects.filter(status=AgentRun.Status.RUNNING)
    if subject is not None:
        running = running.filter(subject_type=subject[0], subject_id=str(subject[1]))
        if agent:
            running = running.filter(agent=agent)
    else:
        cutoff = timezone.now() - agent_run_grace()
        # Runs from before deadlines were recorded: the longest agent bound (ARIA_AGENT_RUN_MAX_SECONDS).
        longest = timedelta(seconds=float(getattr(settings, "ARIA_AGENT_RUN_MAX_SECONDS", 900.0)))
        running = running.filter(
            Q(deadline_at__lt=cutoff) | Q(deadline_at__isnull=True, started_at__lt=cutoff - longest)
        )
    ids = list(running.order_by("pk").values_list("pk", flat=True)[:limit])
    if not ids:
        return []
    now = timezone.now()
    ended = []
    for run_id in ids:
        won = AgentRun.objects.filter(pk=run_id, status=AgentRun.Status.RUNNING).update(
            status=AgentRun.Status.ABANDONED, finish_reason="abandoned", error=reason[:2000], finished_at=now
        )
        if won:
            ended.append(run_id)
    if ended:
        logger.warning("Abandoned agent runs %s: %s", ended, reason)
    return ended


def _orphaned_agent_runs(limit: int) -> int:
    return len(
        agent_runs_abandon(reason="still running past its wall timeout + grace: its worker died or hung", limit=limit)
    )


def _housekeeping(limit: int) -> int:
    return dispatch_prune(limit=limit * 20) + leases_prune(limit=limit * 20)


def _unsealed_audit_records(limit: int) -> int:
    """Audit records committed but not sealed (the process died between commit and on-commit)."""
    return audit_seal(limit=limit * 20)


register_reaper("core.orphaned_agent_runs", _orphaned_agent_runs)
register_reaper("core.audit_seal", _unsealed_audit_records)
register_reaper("core.housekeeping", _housekeeping)


def sweep(limit: int = SWEEP_BATCH) -> dict[str, int]:
    """Run every reaper once (each isolated: one failing never stops the others)."""
    touched: dict[str, int] = {}
    for name, reaper in registered_reapers().items():
        try:
            touched[name] = reaper(limit)
        except Exception:
            logger.exception("Reaper %s failed", name)
            touched[name] = -1
    found = {name: count for name, count in touched.items() if count}
    if found:
        logger.info("Sweep: %s", found)
    return touched
