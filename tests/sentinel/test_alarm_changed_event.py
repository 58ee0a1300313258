"""`alarm_changed` (docs/EVENTS.md): every move a person makes on an alarm — over the API the
Control Room posts to — and every shelve that runs out is announced on the bus, so other people's
Control Rooms show it at once; a refused move announces nothing, and detection's clears do not
flood it."""

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from core.models import Event
from sentinel.models import Alarm
from sentinel.services import alarm_raise, alarm_unshelve_expired
from sentinel.services.detection import alarm_clear
from sentinel.thresholds import evaluate_threshold
from tests.sentinel.factories import set_latest

pytestmark = pytest.mark.django_db


@pytest.fixture
def alarm(vibration):
    set_latest(vibration, 5.0)
    return alarm_raise(signal=vibration, breach=evaluate_threshold(vibration, 5.0), value=5.0, time=timezone.now())


def post(client, path, body=None):
    return client.post(f"/api/v1/alarms/{path}", json.dumps(body or {}), content_type="application/json")


def changes():
    return [
        (e.payload["alarm_id"], e.payload["from_state"], e.payload["to_state"], e.payload["action"])
        for e in Event.objects.filter(type="alarm_changed").order_by("id")
    ]


def test_each_move_a_person_makes_is_announced(api_client, alarm):
    steps = [
        ("acknowledge", {}),
        ("shelve", {"minutes": 30, "comment": "sensor cable"}),
        ("unshelve", {}),
        ("out-of-service", {"comment": "transmitter swap"}),
        ("return-to-service", {}),
    ]
    for path, body in steps:
        assert post(api_client, f"{alarm.pk}/{path}", body).status_code == 200, path
    assert changes() == [
        (alarm.pk, "active_unack", "acknowledged", "acknowledge"),
        (alarm.pk, "acknowledged", "shelved", "shelve"),
        (alarm.pk, "shelved", "acknowledged", "unshelve"),
        (alarm.pk, "acknowledged", "out_of_service", "out_of_service"),
        (alarm.pk, "out_of_service", "active_unack", "return_to_service"),
    ]
    event = Event.objects.filter(type="alarm_changed").last()
    assert event.payload["signal_def_id"] == alarm.signal_id and "owner_id" not in event.payload  # public


def test_a_refused_move_announces_nothing(api_client, alarm):
    assert post(api_client, f"{alarm.pk}/unshelve").status_code == 409  # not shelved
    assert post(api_client, f"{alarm.pk}/shelve", {"minutes": 30, "comment": " "}).status_code == 422
    assert changes() == [] and Alarm.objects.get(pk=alarm.pk).state == "active_unack"


def test_shelves_that_run_out_are_announced_once_each(api_client, alarm, vibration):
    assert post(api_client, f"{alarm.pk}/shelve", {"minutes": 30, "comment": "cable"}).status_code == 200
    alarm_unshelve_expired(now=timezone.now() + timedelta(minutes=31))
    alarm_unshelve_expired(now=timezone.now() + timedelta(minutes=32))  # nothing left to expire
    assert changes()[1:] == [(alarm.pk, "shelved", "active_unack", "unshelve")]


def test_detection_clearing_an_alarm_is_not_announced_here(alarm):
    """A scan round may clear a thousand alarms: those reach the Control Room as its state."""
    assert alarm_clear(alarm=alarm, value=1.0).state == "cleared"
    assert changes() == []
