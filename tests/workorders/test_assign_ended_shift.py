"""Assigning a work order to a shift that has already ended is refused (422 naming
`shift_assignment_id`, nothing written): the roster never offers such a shift, and the API must not
take one either. A shift under way is still assignable (its conflicts stay warnings)."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from core.errors import InvalidInput
from core.models import AuditRecord, Event
from tests.workorders.execution_helpers import analysed_order, shift_covering
from workorders.models import ShiftAssignment, WorkOrder, WorkOrderEvent
from workorders.services.execution import work_order_assign

pytestmark = pytest.mark.django_db
BASE = "/api/v1/workorders"


def post(client, url, body):
    return client.post(url, json.dumps(body), content_type="application/json")


def shift_ending(wo: WorkOrder, ends_at, technician: str = "Night Owl") -> ShiftAssignment:
    return ShiftAssignment.objects.create(
        date=timezone.localdate(ends_at - timedelta(hours=8)),
        shift="night",
        line=wo.cell.line,
        technician=technician,
        role="mechanical technician",
        skills=["mechanical"],
        starts_at=ends_at - timedelta(hours=8),
        ends_at=ends_at,
    )


def writes(wo: WorkOrder) -> tuple[int, int, int]:
    return (
        WorkOrderEvent.objects.filter(work_order=wo).count(),
        AuditRecord.objects.filter(action="work_order.assign").count(),
        Event.objects.filter(type="work_order_updated").count(),
    )


def test_api_refuses_a_shift_that_ended_and_writes_nothing(client, operator, cell):
    wo = analysed_order(cell)
    ended = shift_ending(wo, timezone.now() - timedelta(hours=3))
    client.force_login(operator)
    assert ended.pk not in [r["id"] for r in client.get(f"{BASE}/{wo.pk}/roster").json()["items"]]
    before = writes(wo)

    refused = post(client, f"{BASE}/{wo.pk}/assign", {"shift_assignment_id": ended.pk})

    assert refused.status_code == 422, refused.content
    body = refused.json()
    assert (body["field"], body["code"]) == ("shift_assignment_id", "shift_ended")
    assert "Night Owl's night shift" in body["detail"] and "ended at" in body["detail"]
    wo.refresh_from_db()
    assert (wo.assigned_technician, wo.assigned_shift_id, wo.assigned_at) == ("", None, None)
    assert writes(wo) == before


def test_an_assignment_is_not_replaced_by_a_shift_that_ended(cell, operator):
    wo = analysed_order(cell)
    current = shift_covering(wo)
    work_order_assign(work_order=wo, shift_assignment=current, actor=operator)
    before = writes(wo)
    for i, ends_at in enumerate((timezone.now() - timedelta(days=1), timezone.now())):  # long gone; just ended
        ended = shift_ending(wo, ends_at, f"Technician {i}")
        with pytest.raises(InvalidInput) as refused:
            work_order_assign(work_order=wo, shift_assignment=ended, actor=operator)
        assert (refused.value.field, refused.value.code) == ("shift_assignment_id", "shift_ended")
    wo.refresh_from_db()
    assert (wo.assigned_technician, wo.assigned_shift_id) == ("Marta Silva", current.pk)
    assert writes(wo) == before


def test_a_shift_under_way_is_assigned_with_its_warnings(client, operator, cell):
    wo = analysed_order(cell)  # its window starts in 30 min and runs 2 h
    under_way = shift_ending(wo, timezone.now() + timedelta(minutes=45))
    client.force_login(operator)
    assert under_way.pk in [r["id"] for r in client.get(f"{BASE}/{wo.pk}/roster").json()["items"]]
    assigned = post(client, f"{BASE}/{wo.pk}/assign", {"shift_assignment_id": under_way.pk})
    assert assigned.status_code == 200, assigned.content
    assert [c["code"] for c in assigned.json()["conflicts"]] == ["partly_off_shift"]
    assert assigned.json()["assignment"]["shift_assignment_id"] == under_way.pk
