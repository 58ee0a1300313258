"""`alarm_changed` (docs/EVENTS.md): every move a person makes on an alarm — over the API the
Control Room posts to — every shelve that runs out, and every raise and clear detection makes is
announced on the bus, so other people's Control Rooms show it at once; a refused move announces
nothing, and a scan pass announces its alarms with one INSERT whatever their number."""

import json
from datetime import timedelta

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from core.models import Event
from sentinel.models import Alarm
from sentinel.services import alarm_raise, alarm_unshelve_expired, sentinel_scan
from sentinel.services.detection import alarm_clear
from sentinel.thresholds import evaluate_threshold
from tests.sentinel.factories import make_cell, make_signal, set_latest

pytestmark = pytest.mark.django_db


@pytest.fixture
def alarm(vibration):
    set_latest(vibration, 5.0)
    raised = alarm_raise(signal=vibration, breach=evaluate_threshold(vibration, 5.0), value=5.0, time=timezone.now())
    assert changes() == [(raised.pk, "", "active_unack", "raise")]
    Event.objects.filter(type="alarm_changed").delete()  # the tests below read what follows the raise
    return raised


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


# Detection's raises and clears are announced too (the Control Room re-read its 5-s snapshot for
# them): one alarm_changed each, written in the scan's transaction with one INSERT for the pass.


def _plant(n: int, value: float) -> list:
    cell = make_cell()
    signals = [make_signal(cell, f"s{cell.pk}_{i}") for i in range(n)]
    for signal in signals:
        set_latest(signal, value)
    return signals


def _announcing_inserts(queries) -> int:
    return sum(1 for q in queries if q["sql"].startswith('INSERT INTO "core_event"') and "alarm_changed" in q["sql"])


def test_detection_clearing_an_alarm_is_announced(alarm):
    assert alarm_clear(alarm=alarm, value=1.0).state == "cleared"
    assert changes() == [(alarm.pk, "active_unack", "cleared", "clear")]
    event = Event.objects.get(type="alarm_changed")
    assert event.payload["signal_def_id"] == alarm.signal_id and "owner_id" not in event.payload  # public


def test_an_alarm_a_scan_raises_is_announced(vibration):
    set_latest(vibration, 5.0)
    [raised] = sentinel_scan().evaluation.raised
    assert changes() == [(raised, "", "active_unack", "raise")]
    assert sentinel_scan().evaluation.raised == [] and len(changes()) == 1  # still open: nothing new


def test_an_alarm_a_scan_escalates_to_trip_is_announced(alarm, vibration):
    """Alert → trip keeps the state: without the event other Control Rooms showed the alert
    severity until their next snapshot."""
    set_latest(vibration, 7.5)  # past the trip limit (7.1)
    sentinel_scan()
    alarm.refresh_from_db()
    assert alarm.severity == "trip"
    assert changes() == [(alarm.pk, "active_unack", "active_unack", "escalate")]


@pytest.mark.parametrize("n", [3, 12])
def test_a_scan_announces_its_raises_with_one_insert(n):
    signals = _plant(n, 5.0)
    with CaptureQueriesContext(connection) as queries:
        raised = sentinel_scan().evaluation.raised
    assert len(raised) == n
    assert sorted(changes()) == sorted((pk, "", "active_unack", "raise") for pk in raised)
    assert {e.payload["signal_def_id"] for e in Event.objects.filter(type="alarm_changed")} == {s.pk for s in signals}
    assert _announcing_inserts(queries.captured_queries) == 1


def _clearing_scan(n: int) -> int:
    """Raise n alarms, bring their values back in band, scan: the scan's queries."""
    signals = _plant(n, 5.0)
    sentinel_scan()
    Event.objects.filter(type="alarm_changed").delete()
    for signal in signals:
        set_latest(signal, 1.0)
    with CaptureQueriesContext(connection) as queries:
        cleared = sentinel_scan().evaluation.cleared
    assert len(cleared) == n
    assert sorted(changes()) == sorted((pk, "active_unack", "cleared", "clear") for pk in cleared)
    assert _announcing_inserts(queries.captured_queries) == 1
    Event.objects.filter(type="alarm_changed").delete()
    return len(queries.captured_queries)


def test_a_scan_announces_its_clears_without_a_query_per_alarm():
    assert _clearing_scan(3) == _clearing_scan(12)


def test_a_scan_that_rolls_back_announces_nothing(vibration):
    set_latest(vibration, 5.0)
    with pytest.raises(RuntimeError), transaction.atomic():
        sentinel_scan()
        raise RuntimeError("the scan's transaction fails")
    assert not Alarm.objects.exists() and changes() == []
