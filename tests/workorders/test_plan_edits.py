"""Edits of a work order's plan after it was written (chat, MCP, admin): bounded, announced on the
bus like every other change of the order, and the parts flags follow the parts."""

from __future__ import annotations

import pytest

from core.capabilities import CapabilityContext, dispatch
from core.errors import InvalidInput
from core.models import AuditRecord, Event
from tests.workorders.execution_helpers import analysed_order
from workorders.models import WorkOrder
from workorders.services import work_order_raise_priority, work_order_update
from workorders.services.edits import MAX_DESCRIPTION_CHARS

pytestmark = pytest.mark.django_db


def updates(wo: WorkOrder) -> list[tuple[str, str, str]]:
    rows = Event.objects.filter(type="work_order_updated", payload__work_order_id=wo.pk).order_by("id")
    return [(e.payload["change"], e.payload["status"], e.payload["actor"]) for e in rows]


def edit(user, **args):
    return dispatch("workorders.update_work_order", args, ctx=CapabilityContext(user=user))


def test_a_huge_description_is_refused_naming_the_field_and_nothing_is_written(cell, operator):
    wo = analysed_order(cell)
    for result in (
        edit(operator, work_order_id=wo.pk, description="x" * 200_000, priority="critical"),
        edit(operator, work_order_id=wo.pk, description="x" * (MAX_DESCRIPTION_CHARS + 1)),
    ):
        assert result.is_error and "description" in result.message
    with pytest.raises(InvalidInput) as refused:  # the service itself (the admin's path) refuses it too
        work_order_update(work_order=wo, actor=operator, changes={"description": "x" * (MAX_DESCRIPTION_CHARS + 1)})
    assert refused.value.field == "description"
    fresh = WorkOrder.objects.get(pk=wo.pk)
    assert (fresh.description, fresh.priority) == ("d", "high")
    assert not AuditRecord.objects.filter(action="work_order.update", target_id=str(wo.pk)).exists()
    ok = edit(operator, work_order_id=wo.pk, description="y" * MAX_DESCRIPTION_CHARS)
    assert not ok.is_error, ok.message


def test_a_plan_edit_and_a_priority_raise_are_announced(cell, operator):
    wo = analysed_order(cell)
    before = updates(wo)
    assert not edit(operator, work_order_id=wo.pk, priority="critical", title="Replace DE bearing").is_error
    work_order_raise_priority(work_order=wo, priority="critical", actor=None, reason="already critical")  # no change
    assert updates(wo)[len(before) :] == [("edited", "open", "olga")]

    low = analysed_order(cell)
    work_order_update(work_order=low, actor=operator, changes={"priority": "low"})
    count = len(updates(low))
    work_order_raise_priority(work_order=low, priority="high", actor=None, reason="alarm escalated to trip")
    assert updates(low)[count:] == [("priority_raised", "open", "system")]

    # ... and both are in the order's history, which its page shows (the audit trail alone did not).
    edited = WorkOrder.objects.get(pk=wo.pk).events.filter(details__has_key="fields").get()
    assert (edited.actor, edited.from_status, edited.to_status) == (operator, "open", "open")
    assert edited.note == "Edited: priority, title (priority high → critical)"
    assert edited.details["changed"]["title"]["to"] == "Replace DE bearing"
    raised = WorkOrder.objects.get(pk=low.pk).events.filter(details__has_key="priority_raised").get()
    assert (raised.actor, raised.note) == (None, "Priority raised low → high: alarm escalated to trip")


def test_changing_the_required_parts_of_an_open_order_reflags_the_shortages(cell, operator):
    wo = analysed_order(cell)  # 1 × SKF-6310-2Z-C3 of 2 on hand: nothing short
    assert wo.part_shortages == []
    assert not edit(
        operator, work_order_id=wo.pk, required_parts=[{"ref": "SKF-6310-2Z-C3", "qty": 3}, {"ref": "NOPE-1", "qty": 1}]
    ).is_error
    assert WorkOrder.objects.get(pk=wo.pk).part_shortages == [
        {"ref": "SKF-6310-2Z-C3", "qty": 3, "on_hand": 2, "listed": True},
        {"ref": "NOPE-1", "qty": 1, "on_hand": 0, "listed": False},
    ]
    assert not edit(operator, work_order_id=wo.pk, required_parts=[{"ref": "GREASE-LGHP2", "qty": 1}]).is_error
    assert WorkOrder.objects.get(pk=wo.pk).part_shortages == []
