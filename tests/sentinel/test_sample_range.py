"""A sample's value is a finite number within ±1e15 on every way in: the API's two parsers
(tests/sentinel/test_ingest_api.py, test_ingest_decode.py), already-parsed batches, and the
connectors' payloads (JSON topics and Sparkplug B metrics) — one bad value past it had made every
signal's rollup fail and the trend read 500 on PostgreSQL (the 1-minute average overflowed)."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta, timezone

import pytest

from core.errors import InvalidInput
from sentinel.connectors.payloads import PayloadError, json_values
from sentinel.connectors.supervisor import ConnectorSupervisor
from sentinel.history.rollups import history_rollup_all
from sentinel.models import Connector, ConnectorTag, SampleRollupMinute, SignalSample
from sentinel.services import samples_ingest
from tests.sentinel.connector_helpers import Publisher, pump, require_broker, status_of, unique


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


# A time must be storable too: year 1 with a positive offset is before datetime.min in UTC, and
# converting it for the database overflowed. From a connector that OverflowError (neither a refusal
# nor a database error) left the batch at the head of the connector's backlog: retried every round,
# and every sample after it from that connector waited behind it until the backlog dropped them.
EARLY = ["0001-01-01T00:00:00+05:00", "0001-01-01T23:59:59Z", -62135596800000]


@pytest.mark.parametrize("raw", EARLY)
def test_a_json_payload_time_before_the_range_is_a_payload_error(raw):
    with pytest.raises(PayloadError, match="time out of range"):
        json_values(json.dumps({"value": 1.0, "time": raw}).encode(), datetime.now(UTC))


def test_a_json_payload_nested_past_the_parser_is_a_payload_error():
    """It was a RecursionError: the connector's last error said only that, with a logged traceback per message."""
    for raw in (b"[" * 200_000, b'{"a":' * 100_000):
        with pytest.raises(PayloadError, match="payload nests too deep"):
            json_values(raw[: 256 * 1024], datetime.now(UTC))


@pytest.mark.django_db
def test_an_already_parsed_sample_before_the_range_is_refused_naming_its_time(vibration):
    now = datetime.now(UTC)
    year_one = datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=5)))
    with pytest.raises(InvalidInput) as refused:
        samples_ingest(samples=[(vibration.pk, now, 1.0), (vibration.pk, year_one, 2.0)], now=now)
    assert (refused.value.field, refused.value.status_code) == ("samples.1.time", 422)
    assert not SignalSample.objects.exists()


@pytest.mark.django_db
def test_a_connector_message_dated_before_year_one_does_not_block_the_ones_after_it(vibration):
    require_broker()
    prefix = unique("early")
    publisher, supervisor = Publisher(), ConnectorSupervisor(log=lambda message: None)
    try:
        connector = Connector.objects.create(
            name=prefix, kind=Connector.Kind.MQTT_JSON, endpoint="mqtt://127.0.0.1:1883", topic_filter=f"{prefix}/#"
        )
        ConnectorTag.objects.create(connector=connector, source=f"{prefix}/vib", signal=vibration)
        assert pump(supervisor, lambda: status_of(connector) == Connector.Status.CONNECTED), connector.last_error
        time.sleep(0.3)  # the subscription's SUBACK
        publisher.publish(f"{prefix}/vib", json.dumps({"value": 9.0, "time": "0001-01-01T00:00:00+05:00"}))
        publisher.publish(f"{prefix}/vib", json.dumps({"value": 2.0, "time": datetime.now(UTC).isoformat()}))
        assert pump(supervisor, lambda: SignalSample.objects.filter(signal=vibration).exists())
        assert list(SignalSample.objects.values_list("value", flat=True)) == [2.0]
        assert pump(supervisor, lambda: Connector.objects.get(pk=connector.pk).error_count >= 1)
        assert "time out of range" in Connector.objects.get(pk=connector.pk).last_error
    finally:
        supervisor.stop_all()
        publisher.close()
