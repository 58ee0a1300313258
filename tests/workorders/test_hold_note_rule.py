"""A hold for reason "other" needs a note saying why (work_order_hold); the schema of POST
/workorders/{id}/hold says so (if reason is "other" then a note that is not blank), so a body the
schema calls valid is never refused and one it calls invalid is: the verdicts agree, body by body."""

from __future__ import annotations

import json

import pytest

from tests.openapi_bodies import schema_accepts
from tests.workorders.execution_helpers import analysed_order, shift_covering
from workorders.services.execution import work_order_assign, work_order_start

pytestmark = pytest.mark.django_db
BASE = "/api/v1/workorders"


@pytest.mark.parametrize(
    "body",
    [
        {"reason": "other", "note": "crane booked elsewhere"},
        {"reason": "other"},  # the case found: valid by the schema, refused by the server
        {"reason": "other", "note": ""},
        {"reason": "other", "note": " \t\n"},
        {"reason": "other", "note": "\u3000\u00a0\u2028"},  # blank to str.strip(), not to an ASCII \s
        {"reason": "other", "note": "\u200b"},  # a zero-width space is not whitespace to str.strip()
        {"reason": "other", "note": "x" * 501},
        {"reason": "waiting_parts"},
        {"reason": "waiting_parts", "note": ""},
        {"reason": "waiting_permit", "note": "   "},
        {"reason": "nap", "note": "x"},
    ],
)
def test_the_schema_calls_a_hold_valid_exactly_when_the_server_holds(client, operator, cell, body):
    order = analysed_order(cell)
    work_order_assign(work_order=order, shift_assignment=shift_covering(order), actor=operator)
    work_order_start(work_order=order, actor=operator)
    client.force_login(operator)
    valid_by_schema = schema_accepts("/api/v1/workorders/{work_order_id}/hold", body)
    response = client.post(f"{BASE}/{order.pk}/hold", json.dumps(body), content_type="application/json")
    assert response.status_code in (200, 422), response.content
    assert (response.status_code == 200) == valid_by_schema, (body, response.json())
    if response.status_code == 422:
        assert response.json()["field"] in ("note", "reason"), response.json()
    order.refresh_from_db()
    assert order.status == ("on_hold" if valid_by_schema else "in_progress")


def test_a_held_order_reads_with_its_reason_label_and_the_note_given(client, operator, cell):
    order = analysed_order(cell)
    work_order_assign(work_order=order, shift_assignment=shift_covering(order), actor=operator)
    work_order_start(work_order=order, actor=operator)
    client.force_login(operator)
    note = "crane <b>booked</b> until Friday"
    held = client.post(
        f"{BASE}/{order.pk}/hold", json.dumps({"reason": "other", "note": note}), content_type="application/json"
    )
    assert held.status_code == 200, held.content
    for url in (f"{BASE}/{order.pk}", f"{BASE}/{order.pk}/execution"):
        body = client.get(url).json()
        assert (body["hold_reason"], body["hold_label"], body["hold_note"]) == ("other", "Other (see note)", note)
    assert held.json()["hold_label"] == "Other (see note)" and held.json()["hold_note"] == note

    work_order_start(work_order=order, actor=operator)  # resumed: no longer held, no note
    body = client.get(f"{BASE}/{order.pk}").json()
    assert (body["hold_reason"], body["hold_label"], body["hold_note"]) == ("", "", "")
