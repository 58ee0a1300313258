"""The follow-up work workorders queues (core.dispatch outbox): the task names and their keys.

Services (the lifecycle, alarm intake, capabilities, the sweeper) queue work here and the tasks
module runs it, so neither imports the other (the cycle the services ↔ tasks imports had).
"""

from __future__ import annotations

import uuid

from core.dispatch import dispatch

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
    """Queue the Generator (in the caller's transaction); `reason` as for investigations."""
    key = f"{generation_key(work_order_id)}:{reason or uuid.uuid4().hex}"
    dispatch(GENERATE_TASK, args=[work_order_id], key=key)
