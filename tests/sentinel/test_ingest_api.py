import json
from datetime import timedelta

import pytest
from django.utils import timezone

from core.models import ApiToken, ServiceAccount
from sentinel.models import Alarm, SignalLatest, SignalSample

pytestmark = pytest.mark.django_db
URL = "/api/v1/signals/samples"


def post(client, samples, **extra):
    return client.post(URL, data=json.dumps({"samples": samples}), content_type="application/json", **extra)


def sample(signal, value, *, seconds_ago=0.0, time=None):
    t = time or (timezone.now() - timedelta(seconds=seconds_ago))
    return {"signal_id": signal.pk, "time": t.isoformat(), "value": value}


def test_accepts_a_batch_keeps_the_newest_value_and_raises_on_ingest(api_client, vibration, pressure):
    batch = [sample(vibration, 2.0 + i / 10, seconds_ago=60 - i) for i in range(30)]
    batch += [sample(pressure, 6.0, seconds_ago=5), sample(vibration, 5.2, seconds_ago=1)]
    # An older sample for the pressure arriving later in the batch does not overwrite the newer one.
    batch.append(sample(pressure, 5.0, seconds_ago=50))
    response = post(api_client, batch)
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["accepted"] == 33 and body["signals"] == 2
    assert SignalSample.objects.count() == 33
    latest = {row.signal_id: row.value for row in SignalLatest.objects.all()}
    assert latest == {vibration.pk: 5.2, pressure.pk: 6.0}
    # Detection did not wait for the scan.
    alarm = Alarm.objects.get()
    assert body["raised"] == [alarm.pk] and alarm.value == 5.2


def test_an_older_batch_never_rewinds_the_latest_value(api_client, vibration):
    post(api_client, [sample(vibration, 3.0, seconds_ago=1)])
    post(api_client, [sample(vibration, 9.9, seconds_ago=600)])  # late-arriving history
    assert SignalLatest.objects.get(signal=vibration).value == 3.0
    assert not Alarm.objects.exists()
    assert SignalSample.objects.count() == 2


@pytest.mark.parametrize(
    ("item", "field", "message"),
    [
        # not JSON numbers: refused after authentication (core.json_body), before the ingest parses
        (
            {"value": float("nan")},
            "samples.1.value",
            "samples.1.value: NaN is not a JSON number; send a finite number.",
        ),
        (
            {"value": float("inf")},
            "samples.1.value",
            "samples.1.value: Infinity is not a JSON number; send a finite number.",
        ),
        ({"value": 1.7e308}, "samples.1.value", "samples[1].value: must be a finite number within ±1e+15"),
        ({"value": -1e16}, "samples.1.value", "samples[1].value: must be a finite number within ±1e+15"),
        ({"value": "high"}, "samples.1.value", "samples[1].value: must be a number"),
        ({"value": None}, "samples.1.value", "samples[1].value: is required"),
        ({"signal_id": 999999}, "samples.1.signal_id", "samples[1].signal_id: unknown signal 999999"),
        ({"signal_id": "1"}, "samples.1.signal_id", "samples[1].signal_id: must be an integer"),
        ({"time": "yesterday"}, "samples.1.time", "samples[1].time: must be an ISO 8601 date-time"),
        ({"time": "2026-01-01T00:00:00"}, "samples.1.time", None),
        ({"time": "future"}, "samples.1.time", "samples[1].time: is more than 5 minutes in the future"),
    ],
)
def test_a_bad_item_is_named_and_nothing_is_written(api_client, vibration, item, field, message):
    good = sample(vibration, 5.5)
    bad = {**sample(vibration, 2.0), **item}
    if item.get("time") == "future":
        bad["time"] = (timezone.now() + timedelta(minutes=6)).isoformat()
    # json.dumps writes NaN/Infinity tokens, which Python's parser (and many clients) accept.
    response = post(api_client, [good, bad])
    assert response.status_code == 422, response.content
    body = response.json()
    assert body["field"] == field
    if message:
        assert body["detail"] == message
    assert not SignalSample.objects.exists()
    assert not SignalLatest.objects.exists()
    assert not Alarm.objects.exists()


def test_malformed_item_and_body(api_client, vibration):
    response = post(api_client, [sample(vibration, 1.0), "oops"])
    assert response.status_code == 422
    assert response.json()["field"] == "samples.1"
    response = api_client.post(URL, data="{nope", content_type="application/json")
    assert response.status_code == 400 and response.json()["code"] == "invalid_json"  # like every route
    response = api_client.post(URL, data=json.dumps({"rows": []}), content_type="application/json")
    assert response.status_code == 422 and response.json()["field"] == "samples"


def test_more_than_10000_samples_is_rejected(api_client, vibration):
    one = sample(vibration, 1.0)
    response = post(api_client, [one] * 10_001)
    assert response.status_code == 413
    assert response.json()["field"] == "samples"
    assert not SignalSample.objects.exists()


def test_ingest_requires_operator_or_a_system_token(client, make_user, vibration):
    assert post(client, [sample(vibration, 1.0)]).status_code == 401
    nobody = make_user("nobody")
    client.force_login(nobody)
    assert post(client, [sample(vibration, 1.0)]).status_code == 403
    client.logout()
    # A system service account's bearer token may ingest without the operator scope.
    system = make_user("sentinel-feed")
    ServiceAccount.objects.create(user=system, role=ServiceAccount.Role.SYSTEM)
    raw = ApiToken.generate_key()
    ApiToken.objects.create(user=system, name="feed", key_prefix=raw[:12], key_hash=ApiToken.hash_key(raw))
    response = post(client, [sample(vibration, 1.0)], HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert response.status_code == 200, response.content


def test_parsed_samples_from_a_connector_are_range_checked_too(vibration):
    from core.errors import InvalidInput
    from sentinel.services import samples_ingest

    now = timezone.now()
    for value in (1.7e308, float("nan"), -1e16):
        with pytest.raises(InvalidInput) as refused:
            samples_ingest(samples=[(vibration.pk, now, 1.0), (vibration.pk, now, value)], now=now)
        assert refused.value.field == "samples.1.value"
    assert not SignalSample.objects.exists()
    assert (
        samples_ingest(samples=[(vibration.pk, now, -1e15), (vibration.pk, now - timedelta(seconds=1), 1e15)]).accepted
        == 2
    )
