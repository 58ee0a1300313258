"""Out of service and back, over the routes the Control Room posts to
(`POST /api/v1/alarms/{id}/out-of-service` and `/return-to-service`): operator scope only, a
required and bounded reason named `comment`, the state machine's 409, and an alarm whose signal is
not evaluated (disabled, or its cell off onboarding) cannot return to service — nothing would ever
clear it. Each move leaves its AlarmEvent, audit record and `alarm_changed` event; a refusal none."""

import json

import pytest
from django.utils import timezone

from core.models import AuditRecord, Event
from sentinel.models import Alarm, AlarmEvent
from sentinel.services import alarm_clear, alarm_put_out_of_service, alarm_raise
from sentinel.thresholds import evaluate_threshold
from tests.sentinel.factories import set_latest

pytestmark = pytest.mark.django_db


@pytest.fixture
def alarm(vibration):
    set_latest(vibration, 5.0)
    return alarm_raise(signal=vibration, breach=evaluate_threshold(vibration, 5.0), value=5.0, time=timezone.now())


def post(client, alarm, verb, body=None):
    data = "" if body is None else json.dumps(body)
    return client.post(f"/api/v1/alarms/{alarm.pk}/{verb}", data, content_type="application/json")


def moves(alarm) -> list[tuple]:
    """What the moves after the raise left: history, audit records, bus events."""
    return [
        *[("event", e.to_state, e.comment) for e in AlarmEvent.objects.filter(alarm=alarm).exclude(from_state="")],
        *[("audit", r.action) for r in AuditRecord.objects.filter(target_type="sentinel.alarm").exclude(
            action="alarm.raise")],
        *[("bus", e.payload["action"]) for e in Event.objects.filter(type="alarm_changed").exclude(
            payload__action="raise")],
    ]  # fmt: skip


def state(alarm) -> str:
    return Alarm.objects.get(pk=alarm.pk).state


def test_out_of_service_and_back_is_recorded_and_announced(api_client, alarm):
    body = post(api_client, alarm, "out-of-service", {"comment": "  transmitter swap  "}).json()
    assert body["state"] == "out_of_service"
    assert moves(alarm) == [
        ("event", "out_of_service", "transmitter swap"), ("audit", "alarm.out_of_service"), ("bus", "out_of_service")
    ]  # fmt: skip
    assert post(api_client, alarm, "return-to-service", {"comment": "back"}).json()["state"] == "active_unack"
    assert ("bus", "return_to_service") in moves(alarm) and ("audit", "alarm.return_to_service") in moves(alarm)


@pytest.mark.parametrize("verb", ["out-of-service", "return-to-service"])
def test_a_user_without_the_operator_scope_is_refused(client, make_user, approver, alarm, verb):
    if verb == "return-to-service":
        alarm_put_out_of_service(alarm=alarm.pk, actor=None, comment="set up")
    before = state(alarm)
    assert post(client, alarm, verb, {"comment": "mine"}).status_code == 401
    for user in (make_user("visitor"), approver):  # no scope; an approver watches, never moves alarms
        client.force_login(user)
        response = post(client, alarm, verb, {"comment": "mine"})
        assert (response.status_code, response.json()["code"]) == (403, "missing_scope")
    assert state(alarm) == before


@pytest.mark.parametrize("body", [None, {}, {"comment": ""}, {"comment": "   "}, {"comment": "\u200b\u200b"}])
def test_a_missing_or_blank_reason_is_a_422_naming_comment(api_client, alarm, body):
    response = post(api_client, alarm, "out-of-service", body)
    assert response.status_code == 422 and response.json()["field"] == "comment", response.json()
    assert state(alarm) == "active_unack" and moves(alarm) == []


def test_a_reason_longer_than_500_characters_is_a_422_naming_comment(api_client, alarm):
    response = post(api_client, alarm, "out-of-service", {"comment": "x" * 501})
    assert response.status_code == 422 and response.json()["field"] == "comment"
    assert post(api_client, alarm, "out-of-service", {"comment": 12}).json()["field"] == "comment"
    assert state(alarm) == "active_unack" and moves(alarm) == []


def test_illegal_states_are_409_with_the_allowed_moves(api_client, alarm, vibration):
    response = post(api_client, alarm, "return-to-service")  # not out of service
    assert response.status_code == 409 and response.json()["code"] == "illegal_transition"
    assert post(api_client, alarm, "out-of-service", {"comment": "swap"}).status_code == 200
    again = post(api_client, alarm, "out-of-service", {"comment": "swap again"})
    assert again.status_code == 409 and again.json()["allowed"] == ["active_unack", "cleared"]
    set_latest(vibration, 1.0)
    assert post(api_client, alarm, "return-to-service").json()["state"] == "cleared"  # its value is normal now
    closed = post(api_client, alarm, "out-of-service", {"comment": "too late"})
    assert closed.status_code == 409 and closed.json()["allowed"] == []
    assert [m for m in moves(alarm) if m[0] == "audit"] == [("audit", "alarm.out_of_service"),
                                                            ("audit", "alarm.return_to_service")]  # fmt: skip


def test_an_unknown_alarm_is_404(api_client):
    response = api_client.post(
        "/api/v1/alarms/999999/out-of-service", {"comment": "x"}, content_type="application/json"
    )
    assert response.status_code == 404 and response.json()["field"] == "alarm_id"


@pytest.mark.parametrize("off", ["signal", "cell"])
def test_an_alarm_whose_signal_is_not_evaluated_cannot_return_to_service(api_client, alarm, vibration, off):
    """The scan skips a disabled signal (or a cell off onboarding): annunciated again, the alarm
    would stand in the Control Room for good. Enabled again, it returns."""
    assert post(api_client, alarm, "out-of-service", {"comment": "signal retired for now"}).status_code == 200
    target = vibration if off == "signal" else vibration.cell
    setattr(target, "enabled" if off == "signal" else "onboarding_complete", False)
    target.save()
    response = post(api_client, alarm, "return-to-service")
    assert response.status_code == 409, response.json()
    assert (response.json()["code"], response.json()["field"]) == ("signal_not_evaluated", "alarm_id")
    assert "P-02 vibration_mm_s" in response.json()["detail"]
    assert state(alarm) == "out_of_service" and ("bus", "return_to_service") not in moves(alarm)
    setattr(target, "enabled" if off == "signal" else "onboarding_complete", True)
    target.save()
    assert post(api_client, alarm, "return-to-service").json()["state"] == "active_unack"


def test_a_cleared_alarm_stays_cleared(api_client, alarm):
    alarm_clear(alarm=alarm, value=1.0)
    assert post(api_client, alarm, "out-of-service", {"comment": "x"}).status_code == 409
    assert state(alarm) == "cleared"
