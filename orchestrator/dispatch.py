"""The follow-up work the orchestrator queues (core.dispatch outbox): executing a plan.

The executor, interactions, job polling and the sweeper queue work here and `orchestrator.tasks`
runs it, so none of them imports another just to enqueue (the executor ↔ interactions cycle).
"""

from __future__ import annotations

import uuid

from core.dispatch import dispatch

EXECUTE_PLAN_TASK = "orchestrator.execute_plan"


def enqueue_execution(plan_id: int, *, key: str = "") -> None:
    """Run the plan in a worker once the caller's transaction commits (an outbox row, so a broker
    outage fails nothing; `key` names the unit of work, default a fresh one)."""
    dispatch(EXECUTE_PLAN_TASK, args=[plan_id], key=f"{EXECUTE_PLAN_TASK}:{plan_id}:{key or uuid.uuid4().hex}")
