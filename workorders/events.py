"""Workorders' event types on the bus (documented in docs/EVENTS.md)."""

from core.events import publish
from core.events.contract import _Payload, register_event_type

WORK_ORDER_UPDATED = "work_order_updated"


class WorkOrderUpdated(_Payload):
    work_order_id: int
    status: str
    from_status: str
    change: str  # transition | assigned | edited | priority_raised | created (raised by hand)
    actor: str


def register() -> None:
    register_event_type(WORK_ORDER_UPDATED, WorkOrderUpdated)


def work_order_updated_in_place(work_order_id: int, status: str, change: str, actor: str) -> None:
    """`work_order_updated` for a change that keeps the status (assigned, edited, priority_raised):
    pages showing the order re-read it. In the caller's transaction."""
    publish(
        WORK_ORDER_UPDATED,
        {"work_order_id": work_order_id, "status": status, "from_status": status, "change": change, "actor": actor},
    )
