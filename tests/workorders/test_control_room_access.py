"""Operators and approvers both watch the Control Room; only operators act on it."""

import pytest

from tests.workorders import factories as f

pytestmark = pytest.mark.django_db


@pytest.fixture
def plant_view(cell, vibration):
    f.ramp(vibration, minutes=30)
    alarm = f.make_alarm(vibration)
    order = f.make_work_order(cell, status="open")
    return vibration, alarm, order


@pytest.mark.parametrize("role", ["operator", "approver"])
def test_operator_and_approver_read_the_control_room(client, request, plant_view, role):
    signal, alarm, order = plant_view
    user = request.getfixturevalue(role)
    client.force_login(user)

    page = client.get("/")
    assert page.status_code == 200
    assert b"cr-scope-notice" not in page.content
    state = client.get("/control-room/state")
    assert state.status_code == 200
    body = state.json()
    assert [a["id"] for a in body["alarms"]] == [alarm.pk]
    assert [w["id"] for w in body["work_orders"]] == [order.pk]
    assert body["cells"] and body["cells"][0]["signals"]
    assert body["can_operate"] is (role == "operator")  # the page offers alarm actions to operators only

    # The reads the page's script makes (trends, work orders) and the alarm list.
    assert client.get(f"/api/v1/signals/{signal.pk}/trends?minutes=30&buckets=60").status_code == 200
    assert client.get(f"/api/v1/workorders/{order.pk}").status_code == 200
    assert client.get("/api/v1/workorders").status_code == 200
    assert client.get("/api/v1/alarms").status_code == 200
    assert client.get(f"/api/v1/alarms/{alarm.pk}").status_code == 200


def test_an_approver_still_cannot_act_on_alarms_or_work_orders(client, approver, plant_view):
    _, alarm, order = plant_view
    client.force_login(approver)
    ack = client.post(f"/api/v1/alarms/{alarm.pk}/acknowledge", {"comment": ""}, content_type="application/json")
    assert ack.status_code == 403
    shelve = client.post(
        f"/api/v1/alarms/{alarm.pk}/shelve", {"minutes": 60, "comment": "known"}, content_type="application/json"
    )
    assert shelve.status_code == 403
    move = client.post(
        f"/api/v1/workorders/{order.pk}/transition", {"to_status": "cancelled"}, content_type="application/json"
    )
    assert move.status_code == 403
    alarm.refresh_from_db()
    assert alarm.state == "active_unack"


def test_a_user_without_either_scope_sees_no_plant_data(client, make_user, plant_view):
    client.force_login(make_user("visitor"))
    assert b"cr-scope-notice" in client.get("/").content
    assert client.get("/control-room/state").status_code == 403
    assert client.get("/api/v1/alarms").status_code == 403
