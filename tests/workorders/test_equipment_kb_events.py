"""`equipment_kb_updated` (docs/EVENTS.md): every write of a cell's equipment KB through
`equipment_kb_update` — the PATCH the equipment page sends, the agents' `update_equipment_kb`
capability — writes exactly one outbox row in its transaction (cell, the KB's new `updated_at`,
the actor; no KB content), and a refused write (409 kb_changed, 422) writes none."""

from __future__ import annotations

import json

import pytest
from django.db import transaction

from core.capabilities import CapabilityContext, dispatch
from core.errors import InvalidInput
from core.events import private_scope, publish
from core.models import Event
from tests.workorders import factories as f
from workorders.models import EquipmentKB
from workorders.services import equipment_kb_update

pytestmark = pytest.mark.django_db

BASE = "/api/v1/workorders/kb"
TYPE = "equipment_kb_updated"


def patch(client, cell_id, body):
    return client.patch(f"{BASE}/{cell_id}", json.dumps(body), content_type="application/json")


def kb_events():
    return list(Event.objects.filter(type=TYPE).order_by("id").values_list("payload", flat=True))


def test_a_person_s_patch_publishes_one_event_naming_the_new_version_and_who(client, operator, cell):
    f.make_kb(cell)
    client.force_login(operator)
    read = client.get(f"{BASE}/{cell.pk}").json()
    done = patch(client, cell.pk, {"patch": {"notes": "x"}, "note": "n", "if_updated_at": read["updated_at"]})
    assert done.status_code == 200
    assert kb_events() == [
        {"cell_id": cell.pk, "updated_at": done.json()["updated_at"], "actor": operator.get_username()}
    ]
    assert done.json()["updated_at"] == EquipmentKB.objects.get(cell=cell).updated_at.isoformat()


def test_the_agents_capability_publishes_one_event_too(operator, cell):
    f.make_kb(cell)
    result = dispatch(
        "workorders.update_equipment_kb",
        {"cell_id": cell.pk, "patch": {"notes": "from the KB builder"}, "note": "agent"},
        ctx=CapabilityContext(user=operator),
    )
    assert not result.is_error, result.message
    kb = EquipmentKB.objects.get(cell=cell)
    assert kb_events() == [{"cell_id": cell.pk, "updated_at": kb.updated_at.isoformat(), "actor": operator.username}]


def test_a_write_without_a_person_is_by_system_and_each_write_is_one_event(cell):
    equipment_kb_update(cell=cell, patch={"notes": "a"}, actor=None)
    equipment_kb_update(cell=cell, patch={"notes": "b"}, actor=None)
    events = kb_events()
    assert [e["actor"] for e in events] == ["system", "system"]
    assert events[1]["updated_at"] == EquipmentKB.objects.get(cell=cell).updated_at.isoformat()
    assert all(set(e) == {"cell_id", "updated_at", "actor"} for e in events)  # no KB content


def test_a_stale_write_409_publishes_nothing(client, operator, cell):
    f.make_kb(cell)
    client.force_login(operator)
    read = client.get(f"{BASE}/{cell.pk}").json()
    assert patch(client, cell.pk, {"patch": {"notes": "first"}, "if_updated_at": read["updated_at"]}).status_code == 200
    assert len(kb_events()) == 1
    refused = patch(client, cell.pk, {"patch": {"notes": "late"}, "if_updated_at": read["updated_at"]})
    assert refused.status_code == 409 and refused.json()["code"] == "kb_changed"
    assert len(kb_events()) == 1


@pytest.mark.parametrize(
    "body",
    [
        {"patch": {"spare_parts": [{"ref": "X", "name": "x", "on_hand": -3}]}},  # shape check: 422
        {"patch": {"notes": "x"}, "if_updated_at": "yesterday"},  # malformed version: 422
        {"patch": ["not", "an", "object"]},  # not a merge patch
    ],
)
def test_a_refused_write_422_publishes_nothing(client, operator, cell, body):
    f.make_kb(cell)
    client.force_login(operator)
    refused = patch(client, cell.pk, body)
    assert refused.status_code == 422, refused.content
    assert kb_events() == []


def test_a_refused_capability_call_publishes_nothing(operator, cell):
    f.make_kb(cell)
    result = dispatch(
        "workorders.update_equipment_kb",
        {"cell_id": cell.pk, "patch": {"spare_parts": [{"ref": "X", "name": "x", "on_hand": -1}]}},
        ctx=CapabilityContext(user=operator),
    )
    assert result.is_error
    assert kb_events() == []


def test_a_rolled_back_write_leaves_no_event(cell):
    with pytest.raises(RuntimeError), transaction.atomic():
        equipment_kb_update(cell=cell, patch={"notes": "x"}, actor=None)
        raise RuntimeError("the caller's transaction fails after the write")
    assert kb_events() == [] and not EquipmentKB.objects.filter(cell=cell).exists()


def test_inside_a_user_s_own_turn_the_event_is_private_to_them(operator, cell):
    with private_scope(operator.pk):
        equipment_kb_update(cell=cell, patch={"notes": "x"}, actor=operator)
    (event,) = kb_events()
    assert event["owner_id"] == operator.pk


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"cell_id": 1, "updated_at": "2026-12-07T17:00:00+00:00", "actor": "a", "data": {}}, "data"),
        ({"cell_id": 1, "actor": "a"}, "updated_at"),
        ({"cell_id": "one", "updated_at": "2026-12-07T17:00:00+00:00", "actor": "a"}, "cell_id"),
    ],
)
def test_the_contract_refuses_kb_content_and_missing_or_wrong_fields(payload, field):
    with pytest.raises(InvalidInput) as refused:
        publish(TYPE, payload)
    assert refused.value.field == field
    assert kb_events() == []
