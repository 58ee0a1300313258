"""MQTT JSON topics against the local Mosquitto: mapped values go through the ingest service
(scaled, stored, evaluated), unknown topics are counted and listed, hostile payloads are errors."""

from __future__ import annotations

import json
import time
from datetime import timedelta

import pytest
from django.utils import timezone

from core.models import Event
from sentinel.connectors.supervisor import ConnectorSupervisor
from sentinel.models import Alarm, Connector, ConnectorTag, SignalSample
from tests.sentinel.connector_helpers import Publisher, pump, require_broker, status_of, unique

pytestmark = pytest.mark.django_db


@pytest.fixture
def publisher():
    require_broker()
    publisher = Publisher()
    yield publisher
    publisher.close()


@pytest.fixture
def supervisor():
    supervisor = ConnectorSupervisor(log=lambda message: None)
    yield supervisor
    supervisor.stop_all()


def _json_connector(prefix: str, **tags) -> Connector:
    connector = Connector.objects.create(
        name=prefix, kind=Connector.Kind.MQTT_JSON, endpoint="mqtt://127.0.0.1:1883", topic_filter=f"{prefix}/#"
    )
    for topic, (signal, scale, offset) in tags.items():
        ConnectorTag.objects.create(
            connector=connector, source=f"{prefix}/{topic}", signal=signal, scale=scale, offset=offset
        )
    return connector


def _connected(supervisor, connector) -> None:
    assert pump(supervisor, lambda: status_of(connector) == Connector.Status.CONNECTED), connector.last_error
    time.sleep(0.3)  # the subscription's SUBACK


def test_json_values_are_scaled_stored_and_raise_an_alarm(publisher, supervisor, vibration):
    prefix = unique("aria-test")
    connector = _json_connector(prefix, vib=(vibration, 0.1, 0.0))  # the gateway sends 0.1 mm/s counts
    _connected(supervisor, connector)
    assert Event.objects.filter(type="connector_status", payload__status="connected").exists()
    now = timezone.now().replace(microsecond=0)
    publisher.publish(f"{prefix}/vib", json.dumps({"value": 21, "time": (now - timedelta(seconds=2)).isoformat()}))
    publisher.publish(f"{prefix}/vib", json.dumps([{"value": 48, "time": now.isoformat()}]))

    assert pump(supervisor, lambda: SignalSample.objects.filter(signal=vibration).count() == 2)
    assert sorted(SignalSample.objects.filter(signal=vibration).values_list("value", flat=True)) == pytest.approx(
        [2.1, 4.8]
    )
    alarm = Alarm.objects.get(signal=vibration)
    assert alarm.severity == "alert" and alarm.value == pytest.approx(4.8)
    connector.refresh_from_db()
    assert connector.messages_total == 2 and connector.samples_total == 2
    assert connector.last_message_at is not None and connector.unknown_tag_count == 0


def test_unknown_topics_are_counted_and_listed_not_dropped(publisher, supervisor, vibration):
    prefix = unique("aria-test")
    connector = _json_connector(prefix, vib=(vibration, 1.0, 0.0))
    _connected(supervisor, connector)
    for _ in range(3):
        publisher.publish(f"{prefix}/not-mapped", json.dumps({"value": 1.0}))
    publisher.publish(f"{prefix}/also/unknown", "7.5")

    assert pump(supervisor, lambda: Connector.objects.get(pk=connector.pk).unknown_tag_count == 4)
    connector.refresh_from_db()
    assert sorted(connector.unknown_tags) == [f"{prefix}/also/unknown", f"{prefix}/not-mapped"]
    assert not SignalSample.objects.exists()


@pytest.mark.parametrize(
    "payload",
    [
        b"\xff\xfe not json",
        b'{"value": "high"}',
        b'{"value": 1e999}',
        b'{"value": 1.0, "time": "yesterday"}',
        b'{"value": 1.0, "time": "2026-01-01T00:00:00"}',
        b'[{"time": "2026-01-01T00:00:00Z"}]',
        b'{"value": 1.0, "time": 1e300}',
        b"[" * 5000 + b"]" * 5000,
    ],
)
def test_a_hostile_payload_is_an_error_and_the_connector_keeps_going(publisher, supervisor, vibration, payload):
    prefix = unique("aria-test")
    connector = _json_connector(prefix, vib=(vibration, 1.0, 0.0))
    _connected(supervisor, connector)
    publisher.publish(f"{prefix}/vib", payload)
    assert pump(supervisor, lambda: Connector.objects.get(pk=connector.pk).error_count == 1)
    connector.refresh_from_db()
    assert connector.last_error.startswith(f"{prefix}/vib: ") and connector.status == Connector.Status.CONNECTED
    assert not SignalSample.objects.exists()

    publisher.publish(f"{prefix}/vib", json.dumps({"value": 2.5}))
    assert pump(supervisor, lambda: SignalSample.objects.filter(signal=vibration).exists())


def test_a_time_in_the_future_is_refused_without_losing_the_rest_of_the_batch(publisher, supervisor, vibration):
    prefix = unique("aria-test")
    connector = _json_connector(prefix, vib=(vibration, 1.0, 0.0))
    _connected(supervisor, connector)
    now = timezone.now()
    publisher.publish(
        f"{prefix}/vib",
        json.dumps(
            [{"value": 2.0, "time": now.isoformat()}, {"value": 9.9, "time": (now + timedelta(hours=1)).isoformat()}]
        ),
    )
    assert pump(supervisor, lambda: SignalSample.objects.filter(signal=vibration).exists())
    time.sleep(0.2)
    supervisor.tick()
    assert list(SignalSample.objects.values_list("value", flat=True)) == [2.0]
    connector.refresh_from_db()
    assert connector.error_count == 1 and "future" in connector.last_error


def test_an_unreachable_broker_is_an_error_status_on_the_bus(supervisor, vibration):
    connector = Connector.objects.create(
        name=unique("aria-test"), kind=Connector.Kind.MQTT_JSON, endpoint="mqtt://127.0.0.1:9"
    )
    assert pump(supervisor, lambda: status_of(connector) == Connector.Status.ERROR)
    assert "127.0.0.1:9" in connector.last_error
    event = Event.objects.filter(type="connector_status").latest("id")
    assert event.payload["status"] == "error" and event.payload["connector_id"] == connector.pk


def test_a_disabled_connector_stops(publisher, supervisor, vibration):
    prefix = unique("aria-test")
    connector = _json_connector(prefix, vib=(vibration, 1.0, 0.0))
    _connected(supervisor, connector)
    connector.enabled = False
    connector.save()
    supervisor._last_reload = -100.0  # reload at once rather than in 2 s
    assert pump(supervisor, lambda: status_of(connector) == Connector.Status.STOPPED)
    assert connector.pk not in supervisor.running
