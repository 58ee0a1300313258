"""Work orders' reapers (registered with core.sweep): orders stranded in `detected` (their
investigation message or worker was lost) and in `analyzed` (the Generator's), re-driven through
the dispatch outbox. Re-drives back off (window × 2^n): a message merely queued behind a backlog
is re-sent rarely, and a duplicate is a no-op. An order whose investigation was started and lost
MAX_REDRIVES times (its runs ended `abandoned`: it kills its worker) gets a fallback RCA naming
the reason and waits for a person."""

from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from core.audit import audit_record
from core.dispatch import dispatch_pending
from core.leases import lease_held
from core.models import AgentRun, DispatchIntent
from core.sweep import register_reaper
from workorders.agents import generator, investigator
from workorders.choices import WorkOrderStatus
from workorders.dispatch import generation_dispatch, generation_key, investigation_dispatch, investigation_key
from workorders.models import WorkOrder
from workorders.services.agent_results import work_order_apply_rca
from workorders.services.investigation import fallback_rca

logger = logging.getLogger(__name__)
S = WorkOrderStatus
MAX_REDRIVES = 3


def _window() -> float:
    return float(getattr(settings, "ARIA_STRANDED_AFTER_SECONDS", 60.0))


def _stranded(work_order: WorkOrder, lease_key: str, window: float) -> bool:
    """No live worker holds its lease, no intent is waiting to be sent, and none was sent within
    the back-off (window × 2^re-drives so far, at most 32 windows)."""
    if lease_held(lease_key):
        return False
    prefix = f"{lease_key}:"
    if dispatch_pending(prefix):
        return False
    last_sent = (
        DispatchIntent.objects.filter(dedupe_key__startswith=prefix)
        .order_by("-created_at")
        .values_list("created_at", flat=True)
        .first()
    )
    backoff = timedelta(seconds=window * 2 ** min(_redrives(lease_key), 5))
    return last_sent is None or last_sent <= timezone.now() - backoff


def _abandoned_runs(work_order: WorkOrder, agent: str) -> int:
    return AgentRun.objects.filter(
        agent=agent, subject_type="work_order", subject_id=str(work_order.pk), status=AgentRun.Status.ABANDONED
    ).count()


def _redrives(lease_key: str) -> int:
    return DispatchIntent.objects.filter(dedupe_key__startswith=f"{lease_key}:redrive-").count()


def _record(work_order: WorkOrder, action: str, reason: str, attempt: int) -> None:
    audit_record(
        actor=None,
        action=action,
        target_type="work_order",
        target_id=work_order.pk,
        details={"reason": reason, "attempt": attempt, "status": work_order.status},
    )
    logger.warning("Work order %s: %s (%s, attempt %s)", work_order.pk, action, reason, attempt)


def stranded_investigations(limit: int) -> int:
    window = _window()
    cutoff = timezone.now() - timedelta(seconds=window)
    bucket = int(timezone.now().timestamp() // window)
    touched = 0
    for work_order in WorkOrder.objects.filter(status=S.DETECTED, updated_at__lte=cutoff).order_by("updated_at")[
        :limit
    ]:
        key = investigation_key(work_order.pk)
        if not _stranded(work_order, key, window):
            continue
        attempt = _redrives(key) + 1
        if _abandoned_runs(work_order, investigator.NAME) >= MAX_REDRIVES:
            reason = f"its investigation was started and lost {MAX_REDRIVES} times (worker killed or hung)"
            if work_order_apply_rca(
                work_order=work_order.pk,
                rca=fallback_rca("abandoned", reason),
                agent="sweeper",
                actor=None,
                fallback=True,
            ):
                _record(work_order, "work_order.investigation_abandoned", reason, attempt)
                touched += 1
            continue
        _record(work_order, "work_order.investigation_redriven", "stranded in detected: no live investigation", attempt)
        # One key per order and window: two sweepers racing record one intent.
        investigation_dispatch(work_order.pk, reason=f"redrive-{bucket}")
        touched += 1
    return touched


def stranded_generations(limit: int) -> int:
    """Orders `analyzed` from an agent's RCA whose Generator never ran (its message was lost)."""
    window = _window()
    cutoff = timezone.now() - timedelta(seconds=window)
    bucket = int(timezone.now().timestamp() // window)
    touched = 0
    candidates = WorkOrder.objects.filter(status=S.ANALYZED, updated_at__lte=cutoff).exclude(rca_details__fallback=True)
    for work_order in candidates.order_by("updated_at")[:limit]:
        key = generation_key(work_order.pk)
        ended = AgentRun.objects.filter(
            agent=generator.NAME, subject_type="work_order", subject_id=str(work_order.pk)
        ).exclude(status__in=(AgentRun.Status.RUNNING, AgentRun.Status.ABANDONED))
        if ended.exists() or not _stranded(work_order, key, window):
            continue  # the Generator ran (a failure waits for a person), or it is on its way
        attempt = _redrives(key) + 1
        if _abandoned_runs(work_order, generator.NAME) >= MAX_REDRIVES:
            continue  # it keeps dying: the order stays analyzed for a person
        _record(work_order, "work_order.generation_redriven", "stranded in analyzed: the Generator never ran", attempt)
        generation_dispatch(work_order.pk, reason=f"redrive-{bucket}")
        touched += 1
    return touched


def register() -> None:
    register_reaper("workorders.stranded_investigations", stranded_investigations)
    register_reaper("workorders.stranded_generations", stranded_generations)
