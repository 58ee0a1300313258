"""A sample's value is a finite number within ±1e15 on every way in: the API's two parsers
(tests/sentinel/test_ingest_api.py, test_ingest_decode.py), already-parsed batches, and the
connectors' payloads (JSON topics and Sparkplug B metrics) — one bad value past it had made every
signal's rollup fail and the trend read 500 on PostgreSQL (the 1-minute average overflowed)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from sentinel.connectors.payloads import PayloadError, json_values
from sentinel.history.rollups import history_rollup_all
from sentinel.models import SampleRollupMinute, SignalSample
from sentinel.services import samples_ingest


@pytest.mark.parametrize(
    "raw", [b"1.7e308", b'{"value": -1e16}', b'[{"value": 1.0}, {"value": 1e300}]', b"1" + b"0" * 400]
)
def test_a_json_payload_past_the_range_is_a_payload_error(raw):
    with pytest.raises(PayloadError, match="within"):
        json_values(raw, datetime.now(UTC))


def test_the_edges_of_the_range_are_accepted():
    now = datetime.now(UTC)
    assert [v for _, v in json_values(b'[{"value": 1e15}, {"value": -1e15}]', now)] == [1e15, -1e15]


@pytest.mark.django_db
def test_the_largest_values_roll_up_and_read_back(vibration):
    now = datetime.now(UTC).replace(second=0, microsecond=0) - timedelta(minutes=2)
    samples = [(vibration.pk, now + timedelta(seconds=i), 1e15) for i in range(60)]
    assert samples_ingest(samples=samples, now=now + timedelta(minutes=2)).accepted == 60
    assert history_rollup_all(now=now + timedelta(minutes=2)).minute_rows == 1  # the sum stays finite
    minute = SampleRollupMinute.objects.get(signal=vibration)
    assert (minute.avg, minute.count, minute.max) == (1e15, 60, 1e15)
    assert SignalSample.objects.filter(signal=vibration).count() == 60


def test_a_connector_drops_a_value_out_of_range_after_scaling_and_keeps_the_rest():
    from sentinel.connectors.feed import Feed, TagTarget

    feed = Feed({"plain": TagTarget(1), "scaled": TagTarget(2, scale=1e10)})
    now = datetime.now(UTC)
    mapped = feed.sourced_samples([("plain", now, 1.0), ("scaled", now, 10.0), ("plain", now, float("nan"))])
    mapped += feed.sourced_samples([("scaled", now, 1e10)])  # 1e20 once scaled

    drained = feed.drain()
    assert mapped == 2 and [(s, v) for s, _, v in drained.samples] == [(1, 1.0), (2, 1e11)]
    assert drained.errors == 2 and drained.last_error.startswith("scaled: value 1e+20 (after the tag's scale")
