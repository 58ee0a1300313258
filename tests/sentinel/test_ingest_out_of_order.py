"""A sample older than its signal's latest one is kept as history, and the response says it was
not evaluated (out_of_order), so a late gateway sees why its breach raised nothing."""

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from sentinel.models import Alarm, SignalLatest, SignalSample
from sentinel.services.ingest import samples_ingest

pytestmark = pytest.mark.django_db
URL = "/api/v1/signals/samples"


def post(client, samples):
    return client.post(URL, data=json.dumps({"samples": samples}), content_type="application/json")


def sample(signal, value, *, seconds_ago):
    return {
        "signal_id": signal.pk,
        "time": (timezone.now() - timedelta(seconds=seconds_ago)).isoformat(),
        "value": value,
    }


def test_a_late_breaching_sample_is_stored_and_reported_out_of_order(api_client, vibration, pressure):
    first = post(api_client, [sample(vibration, 3.0, seconds_ago=1), sample(pressure, 6.0, seconds_ago=1)])
    assert first.json()["out_of_order"] == {"count": 0, "indices": []}

    # A gateway delivers a breach 2 s older than the latest vibration value, and a fresh pressure one.
    late = post(api_client, [sample(pressure, 6.1, seconds_ago=0), sample(vibration, 9.9, seconds_ago=3)])
    assert late.status_code == 200, late.content
    body = late.json()
    assert body["accepted"] == 2 and body["raised"] == []
    assert body["out_of_order"] == {"count": 1, "indices": [1]}
    assert SignalSample.objects.filter(signal=vibration, value=9.9).exists()  # kept as history
    assert SignalLatest.objects.get(signal=vibration).value == 3.0
    assert not Alarm.objects.exists()


def test_a_batch_of_ordered_history_for_a_new_signal_is_not_out_of_order(vibration):
    now = timezone.now()
    rows = [(vibration.pk, now - timedelta(seconds=60 - i), 2.0) for i in range(10)]
    result = samples_ingest(samples=rows, now=now)
    assert result.out_of_order.count == 0
    # Same time as the latest is not older: it replaces the value and is evaluated.
    again = samples_ingest(samples=[rows[-1], (vibration.pk, rows[0][1], 2.0)], now=now)
    assert (again.out_of_order.count, again.out_of_order.indices) == (1, [1])


def test_order_is_judged_against_the_latest_before_the_batch_on_every_write_path(vibration, pressure):
    now = timezone.now()
    t = [now - timedelta(seconds=60 - i) for i in range(10)]
    samples_ingest(samples=[(vibration.pk, t[5], 2.0), (pressure.pk, t[5], 6.0)], now=now)
    # Several instants for one signal (one older than its latest), and the pressure's latest sent
    # again (neither newer nor late; a duplicate, so the batch goes in by INSERT … ON CONFLICT).
    result = samples_ingest(samples=[(vibration.pk, t[4], 2.1), (vibration.pk, t[7], 2.2), (pressure.pk, t[5], 6.0)])
    assert (result.out_of_order.count, result.out_of_order.indices) == (1, [0])
    assert result.duplicates == 1  # the pressure instant was stored already
    # A repeated instant inside the batch: the first value wins, a late single instant is named.
    again = samples_ingest(samples=[(pressure.pk, t[3], 5.0), (vibration.pk, t[8], 2.3), (vibration.pk, t[8], 9.9)])
    assert (again.out_of_order.count, again.out_of_order.indices, again.duplicates) == (1, [0], 1)
    assert SignalLatest.objects.get(signal=vibration).value == 2.3
    assert SignalLatest.objects.get(signal=pressure).value == 6.0
    assert SignalSample.objects.count() == 6


def test_a_sample_dated_minutes_ahead_does_not_hide_the_trip_that_follows(api_client, vibration):
    """One sample 4 minutes ahead of the server's clock (a gateway whose clock ran fast, or a client
    doing it on purpose) became the latest, and every real sample of the next 4 minutes was "out of
    order" — stored, never evaluated — so a trip raised nothing. A fresh sample replaces a latest
    dated past AHEAD_TRUSTED and is evaluated."""
    ahead = {"signal_id": vibration.pk, "time": (timezone.now() + timedelta(minutes=4)).isoformat(), "value": 2.0}
    assert post(api_client, [ahead]).status_code == 200

    trip = post(api_client, [sample(vibration, 9.9, seconds_ago=0)])

    assert trip.status_code == 200, trip.content
    body = trip.json()
    assert body["out_of_order"] == {"count": 0, "indices": []}
    alarm = Alarm.objects.get(signal=vibration)
    assert body["raised"] == [alarm.pk] and alarm.severity == "trip"
    assert SignalLatest.objects.get(signal=vibration).value == 9.9
    assert SignalSample.objects.filter(signal=vibration).count() == 2  # the one ahead is kept as history


def test_only_fresh_samples_replace_a_latest_dated_ahead_and_a_slightly_fast_clock_keeps_the_order(vibration, pressure):
    now = timezone.now()
    samples_ingest(
        samples=[(vibration.pk, now + timedelta(minutes=4), 2.0), (pressure.pk, now + timedelta(seconds=5), 6.0)],
        now=now,
    )

    # Late history (older than the stale window) does not stand for the present either way; a
    # latest within AHEAD_TRUSTED of the clock is the present, so an older sample is out of order.
    late = samples_ingest(samples=[(vibration.pk, now - timedelta(minutes=2), 9.9), (pressure.pk, now, 9.5)], now=now)
    assert (late.out_of_order.count, late.out_of_order.indices) == (2, [0, 1])
    assert late.evaluation.raised == []
    assert SignalLatest.objects.get(signal=vibration).value == 2.0
    assert SignalLatest.objects.get(signal=pressure).value == 6.0

    # Several fresh instants in one batch after a latest dated ahead: the newest is the latest, none late.
    fresh = samples_ingest(
        samples=[(vibration.pk, now - timedelta(seconds=2), 3.0), (vibration.pk, now - timedelta(seconds=1), 3.1)],
        now=now,
    )
    assert fresh.out_of_order.count == 0
    assert SignalLatest.objects.get(signal=vibration).value == 3.1
