"""Run the Investigator and the Generator on a work order and apply what they submit.

The agent runs outside any transaction (it takes seconds to minutes); the writes that follow lock
the row and re-check the status, so a duplicate or retried run never records a second RCA. A run
holds a work lease (core.leases) on its order, so a duplicate, redelivered or re-driven message
does not start a second agent while one is live; the sweeper (workorders/reapers.py) re-drives
an order whose lease holder died.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from core.agents.engines import Engine
from core.agents.loop import run_agent
from core.audit import audit_record
from core.capabilities import CapabilityContext
from core.dispatch import dispatch
from core.events import turn_scope
from core.leases import Lease, lease_hold
from core.sweep import agent_runs_abandon
from workorders.agents import generator, investigator
from workorders.choices import WorkOrderStatus
from workorders.models import WorkOrder
from workorders.services.agent_results import work_order_apply_generated, work_order_apply_rca
from workorders.services.system_user import system_user

logger = logging.getLogger(__name__)
S = WorkOrderStatus


INVESTIGATE_TASK = "workorders.investigate"
GENERATE_TASK = "workorders.generate"


def investigation_key(work_order_id: int) -> str:
    return f"{INVESTIGATE_TASK}:{work_order_id}"


def generation_key(work_order_id: int) -> str:
    return f"{GENERATE_TASK}:{work_order_id}"


def investigation_dispatch(work_order_id: int, *, reason: str = "") -> None:
    """Queue the Investigator through the dispatch outbox (in the caller's transaction).
    `reason` names the unit of work (one intent per reason); empty means a fresh request."""
    key = f"{investigation_key(work_order_id)}:{reason or uuid.uuid4().hex}"
    dispatch(INVESTIGATE_TASK, args=[work_order_id], key=key)


def generation_dispatch(work_order_id: int, *, reason: str = "") -> None:
    key = f"{generation_key(work_order_id)}:{reason or uuid.uuid4().hex}"
    dispatch(GENERATE_TASK, args=[work_order_id], key=key)


@contextmanager
def _take_lease(key: str, agent: str, work_order_id: int) -> Iterator[Lease | None]:
    """The order's work lease, heartbeated while the agent runs (a dead holder on any host frees it
    within ARIA_LEASE_TTL_SECONDS); runs of this agent left `running` by a dead holder are abandoned."""
    with lease_hold(key) as lease:
        if lease is None:
            logger.info("Work order %s: %s already in progress elsewhere; not starting another", work_order_id, agent)
        else:
            agent_runs_abandon(
                reason="its worker was lost (the work lease was free again); the work was re-driven",
                subject=("work_order", str(work_order_id)),
                agent=agent,
            )
        yield lease


def _load(work_order_id: int, status: str) -> WorkOrder | None:
    return (
        WorkOrder.objects.select_related("cell", "triggered_by_signal_def", "triggered_by_alarm__signal")
        .filter(pk=work_order_id, status=status)
        .first()
    )


def fallback_rca(reason: str, error: str = "") -> dict:
    detail = f"{reason}: {error}" if error else reason
    return {
        "root_cause": f"undetermined: the investigation ended without an RCA ({detail[:300]})",
        "confidence": 0.0,
        "contributing_factors": [],
        "recommended_action": "Inspect the equipment and review the signal trend manually.",
        "similar_past_failure": "",
        "signal_patterns": {},
        "failure_mode": "undetermined",
        "reason": reason,
    }


def work_order_investigate(*, work_order_id: int, engine: Engine | None = None) -> WorkOrder | None:
    """Investigate a `detected` order: RCA on submit, a fallback RCA (confidence 0) otherwise."""
    if _load(work_order_id, S.DETECTED) is None:
        return None
    with _take_lease(investigation_key(work_order_id), investigator.NAME, work_order_id) as lease:
        return None if lease is None else _investigate(work_order_id, engine)


def _investigate(work_order_id: int, engine: Engine | None) -> WorkOrder | None:
    work_order = _load(work_order_id, S.DETECTED)  # again, under the lease: a run may just have ended
    if work_order is None:
        return None
    user = system_user()
    result = None
    with turn_scope() as turn_id:
        try:
            result = run_agent(
                investigator.build_spec(work_order),
                messages=investigator.task_message(work_order),
                ctx=CapabilityContext(user=user, turn_id=turn_id),
                engine=engine,
                subject=("work_order", work_order.pk),
                defer_end=True,  # the contract: rca_ready, then the Investigator's agent_end
            )
            output, reason, error = result.output, result.finish_reason, result.run.error
        except Exception as exc:  # the loop never raises; building the prompt still might
            logger.exception("Investigation of work order %s crashed", work_order_id)
            output, reason, error = None, "error", f"{type(exc).__name__}: {exc}"
        try:
            if output is not None:
                return work_order_apply_rca(work_order=work_order.pk, rca=output, agent=investigator.NAME, actor=user)
            logger.warning("Investigation of work order %s ended without an RCA: %s %s", work_order_id, reason, error)
            return work_order_apply_rca(
                work_order=work_order.pk,
                rca=fallback_rca(reason, error),
                agent=investigator.NAME,
                actor=user,
                fallback=True,
            )
        finally:
            if result is not None:
                result.publish_end()


def work_order_generate(*, work_order_id: int, engine: Engine | None = None) -> WorkOrder | None:
    """Write the repair order of an `analyzed` order; on failure it stays analyzed for a human."""
    if _load(work_order_id, S.ANALYZED) is None:
        return None
    with _take_lease(generation_key(work_order_id), generator.NAME, work_order_id) as lease:
        return None if lease is None else _generate(work_order_id, engine)


def _generate(work_order_id: int, engine: Engine | None) -> WorkOrder | None:
    work_order = _load(work_order_id, S.ANALYZED)
    if work_order is None:
        return None
    user = system_user()
    with turn_scope() as turn_id:
        try:
            result = run_agent(
                generator.build_spec(work_order),
                messages=generator.task_message(work_order),
                ctx=CapabilityContext(user=user, turn_id=turn_id),
                engine=engine,
                subject=("work_order", work_order.pk),
            )
            output, reason, error = result.output, result.finish_reason, result.run.error
        except Exception as exc:
            logger.exception("Generation for work order %s crashed", work_order_id)
            output, reason, error = None, "error", f"{type(exc).__name__}: {exc}"
        if output is not None:
            return work_order_apply_generated(work_order=work_order.pk, order=output, agent=generator.NAME, actor=user)
    audit_record(
        actor=user,
        action="work_order.generation_failed",
        target_type="work_order",
        target_id=work_order.pk,
        details={"reason": reason, "error": error[:500]},
    )
    return None
