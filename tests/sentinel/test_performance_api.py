"""GET /api/v1/alarm-performance, the page and the `sentinel.alarm_performance` capability: who may
read them, how bad input is refused, and that a suggestion's goal plans the gated limit change."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from core.capabilities import CapabilityContext, Tier, dispatch, project_tools, registry
from tests.sentinel.factories import make_cell, make_signal
from tests.sentinel.test_performance import alarm

pytestmark = pytest.mark.django_db
URL = "/api/v1/alarm-performance"


@pytest.fixture
def history(db):
    cell = make_cell("P-02")
    vibration = make_signal(cell, "vibration_mm_s", alert=4.5, trip=7.1, deadband=0.2)
    pressure = make_signal(cell, "discharge_pressure_bar", unit="bar", low_alert=3.0, alert=8.5, trip=None)
    now = timezone.now()
    for s in (0, 15, 30):
        alarm(vibration, now - timedelta(minutes=30, seconds=-s), cleared_after=5, chattering=s == 30)
    alarm(pressure, now - timedelta(hours=3), cleared_after=None, field="low_alert", peak=2.95)
    return {"vibration": vibration, "pressure": pressure}


@pytest.mark.parametrize("who", ["operator", "approver"])
def test_operators_and_approvers_read_it(history, client, request, who):
    client.force_login(request.getfixturevalue(who))
    response = client.get(URL, {"hours": 6})
    assert response.status_code == 200
    body = response.json()
    assert body["rate"]["total"] == 4 and body["bad_actors"][0]["signal_key"] == "vibration_mm_s"
    assert client.get("/alarms/performance/").status_code == 200


def test_anonymous_is_401_and_a_user_without_a_scope_is_403(history, client, make_user):
    assert client.get(URL).status_code == 401
    assert client.get(URL).json()["code"] == "not_authenticated"
    page = client.get("/alarms/performance/")
    assert page.status_code == 302 and "/login/" in page["Location"]
    client.force_login(make_user("nobody"))
    assert client.get(URL).status_code == 403
    assert client.get("/alarms/performance/").status_code == 403


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ({"hours": 0}, "hours"),
        ({"hours": 10_000}, "hours"),
        ({"hours": "soon"}, "hours"),
        ({"start": "2026-03-02T12:00:00Z", "end": "2026-03-02T11:00:00Z"}, "start"),
        ({"start": "2020-01-01T00:00:00Z", "end": "2020-03-01T00:00:00Z"}, "start"),
        ({"end": "2999-01-01T00:00:00Z"}, "end"),
        ({"start": "yesterday"}, "start"),
        ({"line_id": 0}, "line_id"),
        ({"hours": 1, "start": "2026-03-02T11:00:00Z"}, "hours"),
    ],
)
def test_bad_window_is_a_422_naming_the_field(history, client, operator, query, field):
    client.force_login(operator)
    response = client.get(URL, query)
    assert response.status_code == 422, response.content
    assert response.json()["field"].split(".")[-1] == field


def test_an_unknown_line_is_a_404(history, client, operator):
    client.force_login(operator)
    response = client.get(URL, {"line_id": 999_999})
    assert response.status_code == 404 and response.json()["field"] == "line_id"


def test_the_capability_is_a_read_for_operators(history, operator, approver):
    cap = registry.get("sentinel.alarm_performance")
    assert cap.tier == Tier.READ
    assert "alarm_performance" in {t["name"] for t in project_tools(max_tier=Tier.READ, user=operator)}
    result = dispatch("sentinel.alarm_performance", {"hours": 6}, ctx=CapabilityContext(user=operator))
    assert not result.is_error, result.message
    assert result.content["rate"]["total"] == 4 and "buckets" not in result.content["rate"]
    assert result.content["stale"]["count"] == 0 and result.content["standing"]["count"] == 1
    refused = dispatch("sentinel.alarm_performance", {"hours": 0}, ctx=CapabilityContext(user=operator))
    assert refused.is_error and "hours" in refused.message
    extra = dispatch("sentinel.alarm_performance", {"hours": 1, "sql": "x"}, ctx=CapabilityContext(user=operator))
    assert extra.is_error
    assert dispatch("sentinel.alarm_performance", {}, ctx=CapabilityContext(user=approver)).is_error  # operator scope


@pytest.mark.parametrize(
    ("signal_key", "field"), [("vibration_mm_s", "deadband"), ("discharge_pressure_bar", "low_alert")]
)
def test_a_suggestion_plans_the_gated_change(history, client, operator, signal_key, field):
    client.force_login(operator)
    actors = {b["signal_key"]: b for b in client.get(URL, {"hours": 6}).json()["bad_actors"]}
    suggestion = actors[signal_key]["suggestion"]
    assert suggestion["field"] == field
    plan = client.post("/api/v1/aria/plans", suggestion["plan"], content_type="application/json")
    assert plan.status_code == 201, plan.content
    steps = [s for s in plan.json()["steps"] if s["capability"] == "sentinel.change_signal_limits"]
    assert len(steps) == 1, plan.json()["planner_notes"]
    assert steps[0]["inputs"]["signal_key"] == signal_key
    assert steps[0]["inputs"][field] == pytest.approx(suggestion["value"])
    assert steps[0]["status"] != "done"  # drafted, never applied without an approver
    signal = history["vibration" if signal_key.startswith("vibration") else "pressure"]
    before = getattr(signal, field)
    signal.refresh_from_db()
    assert getattr(signal, field) == before
