"""Workorders' event types on the bus (documented in docs/EVENTS.md)."""

from core.events.contract import _Payload, register_event_type

WORK_ORDER_UPDATED = "work_order_updated"


class WorkOrderUpdated(_Payload):
    work_order_id: int
    status: str
    from_status: str
    change: str  # transition | assigned | completed
    actor: str


def register() -> None:
    register_event_type(WORK_ORDER_UPDATED, WorkOrderUpdated)
