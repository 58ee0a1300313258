"""PATCH /api/v1/workorders/kb/{cell}: the optional `if_updated_at` precondition the equipment page
sends, so two people editing one KB do not silently overwrite each other (409 kb_changed, nothing
written); left out, the write applies as before (agents, stock moves)."""

from __future__ import annotations

import json

import pytest

from core.models import AuditRecord
from tests.workorders import factories as f
from workorders.models import EquipmentKB

pytestmark = pytest.mark.django_db

BASE = "/api/v1/workorders/kb"


def patch(client, cell_id, body):
    return client.patch(f"{BASE}/{cell_id}", json.dumps(body), content_type="application/json")


def snapshot(cell):
    kb = EquipmentKB.objects.filter(cell=cell).first()
    return (kb.data, kb.calibration_log, kb.updated_at) if kb else None


def test_a_write_on_the_version_read_applies_and_moves_the_version(client, operator, cell):
    f.make_kb(cell)
    client.force_login(operator)
    read = client.get(f"{BASE}/{cell.pk}").json()
    done = patch(client, cell.pk, {"patch": {"notes": "x"}, "note": "n", "if_updated_at": read["updated_at"]})
    assert done.status_code == 200 and done.json()["data"]["notes"] == "x"
    assert done.json()["updated_at"] != read["updated_at"]
    # the version it answered is the one to send next
    again = patch(client, cell.pk, {"patch": {"notes": "y"}, "if_updated_at": done.json()["updated_at"]})
    assert again.status_code == 200 and again.json()["data"]["notes"] == "y"


def test_a_write_on_a_stale_version_is_a_409_and_writes_nothing(client, operator, make_user, cell):
    f.make_kb(cell)
    client.force_login(operator)
    read = client.get(f"{BASE}/{cell.pk}").json()
    assert patch(client, cell.pk, {"patch": {"notes": "first"}, "if_updated_at": read["updated_at"]}).status_code == 200
    before = snapshot(cell)
    audits = AuditRecord.objects.filter(action="equipment_kb.update").count()

    refused = patch(
        client, cell.pk, {"patch": {"notes": "second"}, "note": "late", "if_updated_at": read["updated_at"]}
    )
    assert refused.status_code == 409
    body = refused.json()
    assert body["code"] == "kb_changed" and body["field"] == "if_updated_at"
    assert body["updated_at"] == EquipmentKB.objects.get(cell=cell).updated_at.isoformat()
    assert snapshot(cell) == before
    assert AuditRecord.objects.filter(action="equipment_kb.update").count() == audits


def test_null_means_no_kb_yet(client, operator, cell):
    client.force_login(operator)
    first = patch(client, cell.pk, {"patch": {"notes": "new"}, "if_updated_at": None})
    assert first.status_code == 200 and first.json()["data"] == {"notes": "new"}
    # the KB exists now: a second writer who read "no KB" is refused, nothing written
    before = snapshot(cell)
    second = patch(client, cell.pk, {"patch": {"notes": "other"}, "if_updated_at": None})
    assert second.status_code == 409 and second.json()["code"] == "kb_changed"
    assert snapshot(cell) == before


def test_a_version_given_for_a_cell_without_a_kb_is_a_409_and_creates_no_row(client, operator, cell):
    client.force_login(operator)
    refused = patch(client, cell.pk, {"patch": {"notes": "x"}, "if_updated_at": "2026-01-01T00:00:00+00:00"})
    assert refused.status_code == 409 and refused.json()["updated_at"] is None
    assert not EquipmentKB.objects.filter(cell=cell).exists()


def test_without_the_precondition_the_write_applies_as_before(client, operator, cell):
    f.make_kb(cell)
    client.force_login(operator)
    assert patch(client, cell.pk, {"patch": {"notes": "a"}}).status_code == 200
    assert patch(client, cell.pk, {"patch": {"notes": "b"}}).status_code == 200
    assert EquipmentKB.objects.get(cell=cell).data["notes"] == "b"


@pytest.mark.parametrize("value", ["yesterday", 12, True, {"a": 1}])
def test_a_malformed_version_is_a_422_naming_it(client, operator, cell, value):
    f.make_kb(cell)
    client.force_login(operator)
    before = snapshot(cell)
    refused = patch(client, cell.pk, {"patch": {"notes": "x"}, "if_updated_at": value})
    assert refused.status_code == 422, refused.content
    assert "if_updated_at" in json.dumps(refused.json())
    assert snapshot(cell) == before


def test_a_bad_value_with_a_current_version_is_a_422_naming_the_field_and_writes_nothing(client, operator, cell):
    f.make_kb(cell)
    client.force_login(operator)
    read = client.get(f"{BASE}/{cell.pk}").json()
    before = snapshot(cell)
    parts = [dict(p) for p in read["data"]["spare_parts"]]
    parts[1]["on_hand"] = -3
    refused = patch(
        client,
        cell.pk,
        {"patch": {"spare_parts": parts, "equipment": {"manufacturer": "Z"}}, "if_updated_at": read["updated_at"]},
    )
    assert refused.status_code == 422 and refused.json()["field"] == "patch.spare_parts.1.on_hand"
    assert snapshot(cell) == before


def test_the_precondition_is_for_operators_only(client, approver, cell):
    f.make_kb(cell)
    before = snapshot(cell)
    assert patch(client, cell.pk, {"patch": {"notes": "x"}, "if_updated_at": None}).status_code == 401
    client.force_login(approver)
    assert patch(client, cell.pk, {"patch": {"notes": "x"}, "if_updated_at": None}).status_code == 403
    assert snapshot(cell) == before


def test_the_session_write_needs_the_csrf_token_the_equipment_page_sets(operator, cell):
    from django.test import Client

    f.make_kb(cell)
    client = Client(enforce_csrf_checks=True)
    client.force_login(operator)
    before = snapshot(cell)
    refused = patch(client, cell.pk, {"patch": {"notes": "x"}})
    assert refused.status_code == 403 and refused.json()["code"] == "csrf_failed"
    assert snapshot(cell) == before

    assert client.get(f"/equipment/{cell.pk}/").status_code == 200  # the page gives the csrftoken cookie
    token = client.cookies["csrftoken"].value
    done = client.patch(
        f"{BASE}/{cell.pk}",
        json.dumps({"patch": {"notes": "x"}}),
        content_type="application/json",
        HTTP_X_CSRFTOKEN=token,
    )
    assert done.status_code == 200 and done.json()["data"]["notes"] == "x"
