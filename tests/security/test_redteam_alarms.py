"""Red team: shelve's minutes is a JSON Schema integer — a boolean or a string is refused (pydantic's
lax int took `true` as a one-minute shelve), and nothing moves."""

from datetime import timedelta

import pytest
from django.utils import timezone

from sentinel.models import Alarm
from sentinel.services.ingest import samples_ingest
from tests.sentinel.factories import make_cell, make_signal

pytestmark = pytest.mark.django_db


@pytest.fixture
def alarm(db):
    signal = make_signal(make_cell("P-02"), "vibration_mm_s", alert=4.5, trip=7.1, deadband=0.2)
    samples_ingest(samples=[{"signal_id": signal.pk, "time": timezone.now() - timedelta(seconds=1), "value": 6.0}])
    return Alarm.objects.get()


@pytest.mark.parametrize("minutes", [True, "30", 1.5])
def test_shelve_minutes_must_be_a_whole_number(client, operator, alarm, minutes):
    client.force_login(operator)
    response = client.post(
        f"/api/v1/alarms/{alarm.pk}/shelve", {"minutes": minutes, "comment": "known"}, content_type="application/json"
    )
    assert response.status_code == 422, response.content
    assert response.json()["field"] == "minutes"
    alarm.refresh_from_db()
    assert alarm.state == "active_unack"


def test_shelve_minutes_as_a_whole_float_still_shelves(client, operator, alarm):
    client.force_login(operator)
    response = client.post(
        f"/api/v1/alarms/{alarm.pk}/shelve", {"minutes": 30.0, "comment": "known"}, content_type="application/json"
    )
    assert response.status_code == 200, response.content
    assert response.json()["state"] == "shelved"
