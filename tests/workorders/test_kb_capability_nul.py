"""`workorders.update_equipment_kb` reached without an HTTP body (a model's tool call in chat or a
plan step): a NUL in a KB value, a KB key or the note is refused naming where it is, as the PATCH
route's body check names it, and nothing is written — not stored on SQLite, not a database error
on PostgreSQL."""

from __future__ import annotations

import pytest

from core.capabilities import CapabilityContext, dispatch
from core.models import AuditRecord
from tests.workorders import factories as f
from workorders.models import EquipmentKB

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("args", "field"),
    [
        ({"patch": {"notes": "a\x00b"}}, "patch.notes"),
        ({"patch": {"equipment": {"seal": ["ok", "x\x00"]}}}, "patch.equipment.seal.1"),
        ({"patch": {"no\x00tes": "x"}}, "patch.no\\u0000tes"),
        ({"patch": {"notes": "x"}, "note": "read\x00"}, "note"),
    ],
)
def test_a_nul_is_refused_naming_where_and_nothing_is_written(operator, cell, args, field):
    kb = f.make_kb(cell)
    before = (kb.data, kb.calibration_log, kb.updated_at)
    result = dispatch(
        "workorders.update_equipment_kb", {"cell_id": cell.pk, **args}, ctx=CapabilityContext(user=operator)
    )
    assert result.is_error
    assert result.message == f"Invalid input: {field}: text must not contain NUL characters (\\u0000)."
    kb = EquipmentKB.objects.get(cell=cell)
    assert (kb.data, kb.calibration_log, kb.updated_at) == before
    assert not AuditRecord.objects.filter(action="equipment_kb.update").exists()
