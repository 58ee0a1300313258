"""`workorders.raise_work_order` reached without an HTTP body (a model's tool call in chat or a
plan step): a NUL in the title or description is refused naming the field, as the route's body
check refuses it, and nothing is written — not stored on SQLite, not a database error on
PostgreSQL."""

from __future__ import annotations

import pytest

from core.capabilities import CapabilityContext, dispatch
from core.models import AuditRecord
from workorders.models import WorkOrder

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("field", ["title", "description"])
def test_a_nul_in_a_text_is_refused_naming_it_and_nothing_is_written(operator, cell, field):
    args = {"cell_id": cell.pk, "title": "Seal leak", "description": "Drips"}
    args[field] = "Seal\x00leak"
    result = dispatch("workorders.raise_work_order", args, ctx=CapabilityContext(user=operator))
    assert result.is_error
    assert result.message == f"Invalid input: {field}: text must not contain NUL characters (\\u0000)."
    assert not WorkOrder.objects.exists()
    assert not AuditRecord.objects.filter(action="work_order.create").exists()
