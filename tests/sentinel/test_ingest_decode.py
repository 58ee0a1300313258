"""The one-pass decoder (`samples_decode`, msgspec) and the checking parser answer alike: a body
the decoder is unsure of goes to the checking parser, which names the item and field; the
decoder never accepts what the checking parser would refuse."""

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from sentinel.models import SignalLatest, SignalSample
from sentinel.services.ingest import samples_decode, samples_validate

pytestmark = pytest.mark.django_db
URL = "/api/v1/signals/samples"


def _raw(signal_id, time, value):
    return f'{{"signal_id": {signal_id}, "time": {time}, "value": {value}}}'


@pytest.mark.parametrize(
    ("item", "field", "message"),
    [
        (("{id}", '"{now}"', "true"), "samples.1.value", "samples[1].value: must be a number"),
        # not JSON numbers: refused after authentication (core.json_body), before the ingest parses
        (
            ("{id}", '"{now}"', "NaN"),
            "samples.1.value",
            "samples.1.value: NaN is not a JSON number; send a finite number.",
        ),
        (
            ("{id}", '"{now}"', "1e400"),
            "samples.1.value",
            "samples.1.value: 1e400 is not a JSON number; send a finite number.",
        ),
        (("{id}", '"{now}"', "1" + "0" * 400), "samples.1.value", "samples[1].value: must be finite"),
        (("{id}", '"{now}"', "1.7e308"), "samples.1.value", "samples[1].value: must be a finite number within ±1e+15"),
        (
            ("{id}", '"{now}"', "-1" + "0" * 16),
            "samples.1.value",
            "samples[1].value: must be a finite number within ±1e+15",
        ),
        (("{id}.0", '"{now}"', "1"), "samples.1.signal_id", "samples[1].signal_id: must be an integer"),
        (("true", '"{now}"', "1"), "samples.1.signal_id", "samples[1].signal_id: must be an integer"),
        (("9" * 20, '"{now}"', "1"), "samples.1.signal_id", f"samples[1].signal_id: unknown signal {'9' * 20}"),
        (("{id}", '"{lower}"', "1"), "samples.1.time", "samples[1].time: must be an ISO 8601 date-time"),
        (("{id}", '"{naive}"', "1"), "samples.1.time", None),
        (("{id}", "null", "1"), "samples.1.time", "samples[1].time: is required"),
        (("{id}", "1700000000", "1"), "samples.1.time", "samples[1].time: must be an ISO 8601 date-time string"),
    ],
)
def test_a_body_the_decoder_refuses_is_named_by_the_checking_parser(api_client, vibration, item, field, message):
    now = timezone.now() - timedelta(seconds=1)
    subs = {
        "id": vibration.pk,
        "now": now.isoformat(),
        "lower": now.strftime("%Y-%m-%dt%H:%M:%Sz"),  # RFC 3339 allows it; fromisoformat does not
        "naive": now.replace(tzinfo=None).isoformat(),
    }
    good = _raw(vibration.pk, f'"{now.isoformat()}"', "2.0")
    bad = _raw(*(part.format(**subs) for part in item))
    body = f'{{"samples": [{good}, {bad}]}}'.encode()
    assert samples_decode(body) is None
    response = api_client.post(URL, data=body, content_type="application/json")
    assert response.status_code == 422, response.content
    assert response.json()["field"] == field
    if message:
        assert response.json()["detail"] == message
    assert not SignalSample.objects.exists() and not SignalLatest.objects.exists()


def test_a_well_formed_body_decodes_to_what_the_checking_parser_gives(vibration, pressure):
    now = timezone.now()
    items = [
        {"signal_id": vibration.pk, "time": (now - timedelta(seconds=2)).isoformat(), "value": 3},
        {"signal_id": pressure.pk, "time": "2026-01-01T00:00:00.1234567+02:00", "value": -0.5, "extra": [1]},
        {"signal_id": vibration.pk, "time": (now + timedelta(minutes=4)).isoformat(), "value": 1e15},
    ]
    body = json.dumps({"samples": items, "gateway": "gw-1"}).encode()
    decoded = samples_decode(body, now=now)
    assert decoded == samples_validate(items, now=now)
    assert decoded is not None and all(type(v) is float for _, _, v in decoded)


@pytest.mark.parametrize(
    "body",
    [b"", b"null", b"[]", b'{"samples": {}}', b'{"rows": []}', b"{nope"],
)
def test_bodies_that_are_not_a_samples_object_go_to_the_checking_parser(body):
    assert samples_decode(body) is None


def test_a_future_time_goes_to_the_checking_parser(vibration):
    now = timezone.now()
    item = {"signal_id": vibration.pk, "time": (now + timedelta(minutes=6)).isoformat(), "value": 1.0}
    assert samples_decode(json.dumps({"samples": [item]}).encode(), now=now) is None
