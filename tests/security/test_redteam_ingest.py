"""Red team: odd sample batches get a 4xx naming the field, never a 500, and nothing is written."""

import json

import pytest

from sentinel.models import SignalLatest, SignalSample
from tests.sentinel.factories import make_cell, make_signal

pytestmark = pytest.mark.django_db
URL = "/api/v1/signals/samples"


@pytest.fixture
def vibration(db):
    return make_signal(make_cell("P-02"), "vibration_mm_s", alert=4.5, trip=7.1, deadband=0.2)


@pytest.fixture
def api_client(client, operator):
    client.force_login(operator)
    return client


def test_a_time_before_the_first_utc_instant_is_named_not_a_500(api_client, vibration):
    # 0001-01-01T00:00+14:00 is 0000-12-31T10:00Z: converting it for the database overflowed.
    good = {"signal_id": vibration.pk, "time": "2026-01-01T00:00:00Z", "value": 1.0}
    bad = {"signal_id": vibration.pk, "time": "0001-01-01T00:00:00+14:00", "value": 1.0}
    response = api_client.post(URL, data=json.dumps({"samples": [good, bad]}), content_type="application/json")
    assert response.status_code == 422, response.content
    assert response.json()["field"] == "samples.1.time"
    assert not SignalSample.objects.exists() and not SignalLatest.objects.exists()


def test_a_body_that_is_not_utf8_is_invalid_json_not_a_500(api_client, vibration):
    raw = b'{"samples":[{"signal_id":%d,"time":"\xff","value":1}]}' % vibration.pk
    response = api_client.post(URL, data=raw, content_type="application/json")
    assert response.status_code == 400, response.content
    assert response.json()["code"] == "invalid_json"
    assert not SignalSample.objects.exists()
