"""Text PostgreSQL cannot store (a NUL, a lone surrogate) in a capability's arguments is refused by
`core.capabilities.dispatch` for every capability, naming where it is, before the handler runs: a
model's tool call, a plan step and an MCP call carry no HTTP body, so the door's body check never
saw them. Before, `update_work_order` stored a NUL on SQLite and failed on PostgreSQL with
"DataError: PostgreSQL text fields cannot contain NUL (0x00) bytes" (no field named), and a read's
query failed the same way. The services that also take text from code (an agent's result applied
without dispatch) keep their own check: tested here on the service itself."""

from __future__ import annotations

import pytest

from core.capabilities import CapabilityContext, dispatch
from core.errors import InvalidInput
from core.models import AuditRecord
from tests.workorders import factories as f
from workorders.models import EquipmentKB, WorkOrder
from workorders.services.kb import equipment_kb_update
from workorders.services.manual_intake import work_order_raise

pytestmark = pytest.mark.django_db

NUL = "text must not contain NUL characters (\\u0000)."
HALF = "text must be Unicode characters; a \\ud800-\\udfff escape is half of a pair."


@pytest.mark.parametrize(
    ("args", "where", "problem"),
    [
        ({"description": "Seal\x00leak"}, "description", NUL),
        ({"recommended_actions": ["ok", "re\x00place"]}, "recommended_actions.1", NUL),
        ({"title": "Seal \ud83d leak"}, "title", HALF),
    ],
)
def test_a_write_capability_refuses_unstorable_text_naming_it_and_changes_nothing(operator, cell, args, where, problem):
    wo = f.make_work_order(cell, title="Seal leak", description="Drips")
    before = AuditRecord.objects.count()

    result = dispatch(
        "workorders.update_work_order", {"work_order_id": wo.pk, **args}, ctx=CapabilityContext(user=operator)
    )

    assert result.is_error and result.message == f"Invalid input: {where}: {problem}"
    wo.refresh_from_db()
    assert (wo.title, wo.description) == ("Seal leak", "Drips")
    assert AuditRecord.objects.count() == before


def test_a_read_capability_refuses_a_nul_in_its_query_rather_than_failing_in_the_database(operator, cell):
    result = dispatch("workorders.find_cells", {"query": "P-\x0002"}, ctx=CapabilityContext(user=operator))

    assert result.is_error and result.message == f"Invalid input: query: {NUL}"


def test_a_key_holding_a_nul_is_named_with_the_nul_escaped(operator, cell):
    f.make_kb(cell)
    result = dispatch(
        "workorders.update_equipment_kb",
        {"cell_id": cell.pk, "patch": {"equipment": {"se\x00al": "x"}}},
        ctx=CapabilityContext(user=operator),
    )
    assert result.is_error and result.message == f"Invalid input: patch.equipment.se\\u0000al: {NUL}"


def test_the_services_refuse_it_from_a_caller_without_dispatch(operator, cell):
    kb = f.make_kb(cell)
    with pytest.raises(InvalidInput) as refused:
        equipment_kb_update(cell=cell, patch={"notes": ["ok", "b\udc00"]}, actor=operator)
    assert refused.value.field == "patch.notes.1" and HALF in refused.value.message
    assert EquipmentKB.objects.get(pk=kb.pk).data == kb.data

    with pytest.raises(InvalidInput) as refused:
        work_order_raise(cell=cell, title="Seal", description="a\x00b", actor=operator)
    assert refused.value.field == "description" and NUL in refused.value.message
    assert not WorkOrder.objects.exists()
