"""Run the Investigator and the Generator on a work order and apply what they submit.

The agent runs outside any transaction (it takes seconds to minutes); the writes that follow lock
the row and re-check the status, so a duplicate or retried run never records a second RCA. A run
holds a work lease (core.leases) on its order, so a duplicate, redelivered or re-driven message
does not start a second agent while one is live; the sweeper (workorders/reapers.py) re-drives
an order whose lease holder died.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

from core.agents.engines import Engine
from core.audit import audit_record
from core.leases import Lease, lease_hold
from core.sweep import agent_runs_abandon
from workorders.agents import generator, investigator
from workorders.choices import WorkOrderStatus
from workorders.dispatch import generation_key, investigation_key
from workorders.models import WorkOrder
from workorders.services.agent_results import work_order_apply_generated, work_order_apply_rca
from workorders.services.agent_runs import work_order_agent_run
from workorders.services.system_user import system_user

logger = logging.getLogger(__name__)
S = WorkOrderStatus


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
    return work_order_agent_run(
        work_order=work_order,
        spec=investigator.build_spec,
        task_message=investigator.task_message,
        engine=engine,
        defer_end=True,  # the contract: rca_ready, then the Investigator's agent_end
        on_output=lambda rca: work_order_apply_rca(
            work_order=work_order.pk, rca=rca, agent=investigator.NAME, actor=user
        ),
        on_failure=lambda reason, error: work_order_apply_rca(
            work_order=work_order.pk,
            rca=fallback_rca(reason, error),
            agent=investigator.NAME,
            actor=user,
            fallback=True,
        ),
    )


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

    def failed(reason: str, error: str) -> None:
        """The order stays analyzed for a person; the audit says why."""
        audit_record(
            actor=user,
            action="work_order.generation_failed",
            target_type="work_order",
            target_id=work_order.pk,
            details={"reason": reason, "error": error[:500]},
        )

    return work_order_agent_run(
        work_order=work_order,
        spec=generator.build_spec,
        task_message=generator.task_message,
        engine=engine,
        on_output=lambda order: work_order_apply_generated(
            work_order=work_order.pk, order=order, agent=generator.NAME, actor=user
        ),
        on_failure=failed,
    )
