"""Workorders' event types on the bus (documented in docs/EVENTS.md)."""

from core.events import publish
from core.events.contract import _Payload, register_event_type

WORK_ORDER_UPDATED = "work_order_updated"
EQUIPMENT_KB_UPDATED = "equipment_kb_updated"


class WorkOrderUpdated(_Payload):
    work_order_id: int
    status: str
    from_status: str
    change: str  # transition | assigned | edited | priority_raised | created (raised by hand)
    actor: str


class EquipmentKbUpdated(_Payload):
    """A cell's equipment KB was written: which, its new version, by whom. No KB content: the
    equipment page re-reads itself (operator scope) for that."""

    cell_id: int
    updated_at: str  # the KB's new `updated_at` (ISO 8601): the version a save must name
    actor: str  # username, or `system`


def register() -> None:
    register_event_type(WORK_ORDER_UPDATED, WorkOrderUpdated)
    register_event_type(EQUIPMENT_KB_UPDATED, EquipmentKbUpdated)


def work_order_updated_in_place(work_order_id: int, status: str, change: str, actor: str) -> None:
    """`work_order_updated` for a change that keeps the status (assigned, edited, priority_raised):
    pages showing the order re-read it. In the caller's transaction."""
    publish(
        WORK_ORDER_UPDATED,
        {"work_order_id": work_order_id, "status": status, "from_status": status, "change": change, "actor": actor},
    )
