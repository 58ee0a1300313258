"""Bad input found by a first real user: every one is a clear error naming the field, nothing written."""

from datetime import timedelta

import pytest
from django.utils import timezone

from core.capabilities import CapabilityContext, dispatch
from core.errors import InvalidInput
from core.models import AuditRecord
from tests.workorders import factories as f
from workorders.models import WorkOrder
from workorders.services import work_order_update

pytestmark = pytest.mark.django_db


def call(user, name, **args):
    return dispatch(f"workorders.{name}", args, ctx=CapabilityContext(user=user))


@pytest.mark.parametrize("field", ["title", "description", "priority", "recommended_actions", "required_parts"])
def test_update_work_order_rejects_null_for_a_field_that_needs_a_value(operator, cell, field):
    wo = f.make_work_order(cell, title="Replace bearings", description="DE bearing", required_parts=[])
    audits = AuditRecord.objects.count()
    result = call(operator, "update_work_order", work_order_id=wo.pk, **{field: None})
    assert result.is_error and field in result.message
    wo.refresh_from_db()
    assert wo.title == "Replace bearings" and wo.description == "DE bearing" and wo.priority == "medium"
    assert AuditRecord.objects.count() == audits


def test_update_work_order_may_clear_a_nullable_field(operator, cell):
    wo = f.make_work_order(cell, estimated_duration_min=120)
    result = call(operator, "update_work_order", work_order_id=wo.pk, estimated_duration_min=None)
    assert not result.is_error, result.message
    wo.refresh_from_db()
    assert wo.estimated_duration_min is None


def test_update_work_order_rejects_a_window_that_ends_before_it_starts(operator, cell):
    start = timezone.now() + timedelta(days=1)
    wo = f.make_work_order(cell, suggested_window_start=start, suggested_window_end=start + timedelta(hours=4))
    result = call(
        operator,
        "update_work_order",
        work_order_id=wo.pk,
        suggested_window_start=(start + timedelta(hours=2)).isoformat(),
        suggested_window_end=(start + timedelta(hours=1)).isoformat(),
    )
    assert result.is_error and "suggested_window_end" in result.message
    # only the end moved, before the stored start: also refused, and nothing written
    result = call(
        operator,
        "update_work_order",
        work_order_id=wo.pk,
        suggested_window_end=(start - timedelta(hours=1)).isoformat(),
    )
    assert result.is_error and "suggested_window_end" in result.message
    wo.refresh_from_db()
    assert wo.suggested_window_end == start + timedelta(hours=4)


def test_work_order_update_names_a_malformed_window_and_writes_nothing(cell):
    wo = f.make_work_order(cell, title="Keep me")
    with pytest.raises(InvalidInput) as exc:
        work_order_update(work_order=wo, actor=None, changes={"title": "New", "suggested_window_start": "tomorrow"})
    assert exc.value.field == "suggested_window_start"
    assert WorkOrder.objects.get(pk=wo.pk).title == "Keep me"


def test_get_shift_assignments_names_a_malformed_date(operator, cell):
    result = call(operator, "get_shift_assignments", date="not-a-date")
    assert result.is_error and "date" in result.message
    assert "ValueError" not in result.message
    ok = call(operator, "get_shift_assignments", date="2026-11-30")
    assert not ok.is_error, ok.message
