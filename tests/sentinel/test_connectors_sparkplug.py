"""Sparkplug B against the local Mosquitto: births announce aliases, data by alias is stored,
a sequence gap asks the edge node for a rebirth, a death certificate makes its signals stale."""

from __future__ import annotations

import itertools
import time

import pytest
from django.utils import timezone

from sentinel.connectors.sparkplug_b_pb2 import Payload
from sentinel.connectors.supervisor import ConnectorSupervisor
from sentinel.models import Connector, ConnectorTag, SignalLatest, SignalSample, StaleCondition
from tests.sentinel.connector_helpers import Publisher, pump, require_broker, status_of, unique
from tests.sentinel.factories import make_signal

pytestmark = pytest.mark.django_db
DOUBLE = 10


_clock = itertools.count()


def _ms(offset_s: float = 0.0) -> int:
    """Epoch ms, never the same twice (a repeated (signal, time) is a duplicate, stored once)."""
    return int((time.time() + offset_s) * 1000) + next(_clock)


def payload(seq: int | None, *metrics: tuple) -> bytes:
    """metrics: (name or None, alias, value or None)."""
    message = Payload(timestamp=_ms())
    if seq is not None:
        message.seq = seq
    for name, alias, value in metrics:
        metric = message.metrics.add(alias=alias, timestamp=_ms(), datatype=DOUBLE)
        if name:
            metric.name = name
        if value is None:
            metric.is_null = True
        else:
            metric.double_value = value
    return message.SerializeToString()


class EdgeNode:
    def __init__(self, publisher: Publisher, group: str, node: str) -> None:
        self.publisher, self.group, self.node = publisher, group, node

    def send(self, kind: str, body: bytes, device: str = "") -> None:
        topic = f"spBv1.0/{self.group}/{kind}/{self.node}" + (f"/{device}" if device else "")
        self.publisher.publish(topic, body)


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


@pytest.fixture
def plant(cell, vibration, publisher, supervisor):
    """A Sparkplug connector on its own group, P-02 vibration and temperature on device `pump`,
    the node's own `Pressure` metric mapped too; connected."""
    temperature = make_signal(cell, "bearing_temp_c", alert=80.0)
    pressure = make_signal(cell, "discharge_pressure_bar", alert=9.0)
    group = unique("aria-test")
    connector = Connector.objects.create(
        name=group,
        kind=Connector.Kind.MQTT_SPARKPLUG_B,
        endpoint="mqtt://127.0.0.1:1883",
        topic_filter=f"spBv1.0/{group}/#",
    )
    for source, signal in (("pump/Vibration", vibration), ("pump/Temperature", temperature), ("Pressure", pressure)):
        ConnectorTag.objects.create(connector=connector, source=f"{group}/edge1/{source}", signal=signal)
    assert pump(supervisor, lambda: status_of(connector) == Connector.Status.CONNECTED), connector.last_error
    time.sleep(0.3)
    node = EdgeNode(publisher, group, "edge1")
    return connector, node, {"vibration": vibration, "temperature": temperature, "pressure": pressure}


def bd_seq(value: int) -> bytes:
    """An NDEATH payload (no seq) carrying the session's bdSeq, as an edge node's MQTT will does."""
    message = Payload(timestamp=_ms())
    message.metrics.add(name="bdSeq", datatype=8, long_value=value)
    return message.SerializeToString()


def _birth(node: EdgeNode, session: int = 0) -> None:
    birth = Payload.FromString(payload(0, ("Pressure", 1, 6.2)))
    birth.metrics.add(name="bdSeq", datatype=8, long_value=session)
    node.send("NBIRTH", birth.SerializeToString())
    node.send("DBIRTH", payload(1, ("Vibration", 10, 2.1), ("Temperature", 11, 58.0)), device="pump")


def test_births_then_data_by_alias_are_stored(plant, supervisor):
    connector, node, signals = plant
    _birth(node)
    node.send("DDATA", payload(2, (None, 10, 2.4), (None, 11, 59.5)), device="pump")
    node.send("NDATA", payload(3, (None, 1, 6.4), ("Motor/Speed", 30, 1480.0)))  # a metric nobody mapped

    vibration, temperature, pressure = signals["vibration"], signals["temperature"], signals["pressure"]
    assert pump(supervisor, lambda: SignalSample.objects.filter(signal=vibration).count() == 2)
    assert pump(supervisor, lambda: SignalSample.objects.filter(signal=pressure).count() == 2)
    assert sorted(SignalSample.objects.filter(signal=vibration).values_list("value", flat=True)) == [2.1, 2.4]
    assert sorted(SignalSample.objects.filter(signal=temperature).values_list("value", flat=True)) == [58.0, 59.5]
    connector.refresh_from_db()
    assert pump(supervisor, lambda: Connector.objects.get(pk=connector.pk).unknown_tag_count == 1)
    connector.refresh_from_db()
    assert connector.unknown_tags == [f"{node.group}/edge1/Motor/Speed"]  # bdSeq is protocol metadata, not listed
    assert connector.error_count == 0


def test_a_sequence_gap_asks_the_edge_node_for_a_rebirth(plant, supervisor, publisher):
    connector, node, signals = plant
    publisher.subscribe(f"spBv1.0/{node.group}/NCMD/edge1")
    _birth(node)
    node.send("DDATA", payload(5, (None, 10, 2.6)), device="pump")  # 2, 3, 4 went missing

    assert pump(supervisor, lambda: Connector.objects.get(pk=connector.pk).error_count == 1)
    connector.refresh_from_db()
    assert "sequence gap: expected 2, got 5" in connector.last_error
    deadline = time.monotonic() + 5
    while not publisher.received and time.monotonic() < deadline:
        time.sleep(0.05)
    topic, body = publisher.received[0]
    rebirth = Payload.FromString(body).metrics[0]
    assert topic.endswith("/NCMD/edge1") and rebirth.name == "Node Control/Rebirth" and rebirth.boolean_value
    # The value itself is still a measurement: stored.
    assert pump(supervisor, lambda: SignalSample.objects.filter(signal=signals["vibration"], value=2.6).exists())


def test_data_before_any_birth_is_refused_and_asks_for_a_rebirth(plant, supervisor, publisher):
    connector, node, _signals = plant
    publisher.subscribe(f"spBv1.0/{node.group}/NCMD/edge1")
    node.send("DDATA", payload(4, (None, 10, 2.6)), device="pump")
    assert pump(supervisor, lambda: Connector.objects.get(pk=connector.pk).error_count == 1)
    assert "before its NBIRTH" in Connector.objects.get(pk=connector.pk).last_error
    assert not SignalSample.objects.exists()
    deadline = time.monotonic() + 5
    while not publisher.received and time.monotonic() < deadline:
        time.sleep(0.05)
    assert publisher.received


def test_a_device_death_makes_its_signals_stale_at_once(plant, supervisor):
    _connector, node, signals = plant
    _birth(node)
    assert pump(supervisor, lambda: SignalLatest.objects.filter(signal=signals["temperature"]).exists())
    node.send("DDEATH", payload(2), device="pump")

    assert pump(
        supervisor,
        lambda: (
            SignalLatest.objects.filter(signal__in=[signals["vibration"], signals["temperature"]], stale=True).count()
            == 2
        ),
    )
    assert not SignalLatest.objects.get(signal=signals["pressure"]).stale  # the node itself lives on
    assert StaleCondition.objects.filter(cleared_at__isnull=True).count() == 2


def test_a_node_death_makes_every_signal_of_the_node_stale_and_a_rebirth_revives_them(plant, supervisor):
    _connector, node, _signals = plant
    _birth(node)
    assert pump(supervisor, lambda: SignalLatest.objects.count() == 3)
    node.send("NDEATH", bd_seq(0))
    assert pump(supervisor, lambda: SignalLatest.objects.filter(stale=True).count() == 3)
    assert StaleCondition.objects.filter(cleared_at__isnull=True).count() == 3

    time.sleep(0.01)
    _birth(node)  # fresh values end the staleness through the ingest service
    assert pump(supervisor, lambda: SignalLatest.objects.filter(stale=True).count() == 0)
    assert StaleCondition.objects.filter(cleared_at__isnull=True).count() == 0


def test_a_late_death_of_an_earlier_session_is_ignored(plant, supervisor):
    _connector, node, _signals = plant
    _birth(node, session=7)
    assert pump(supervisor, lambda: SignalLatest.objects.count() == 3)
    node.send("NDEATH", bd_seq(6))  # the previous session's will
    node.send("DDATA", payload(2, (None, 10, 2.7)), device="pump")
    assert pump(supervisor, lambda: SignalSample.objects.filter(value=2.7).exists())
    assert not SignalLatest.objects.filter(stale=True).exists()
    node.send("NDEATH", bd_seq(7))
    assert pump(supervisor, lambda: SignalLatest.objects.filter(stale=True).count() == 3)


@pytest.mark.parametrize("body", [b"\x0a\xff\xff\xff", b"not protobuf at all \xff", b"\x12" + b"\xff" * 20])
def test_a_broken_sparkplug_payload_is_an_error_not_a_crash(plant, supervisor, body):
    connector, node, signals = plant
    node.send("NBIRTH", body)
    assert pump(supervisor, lambda: Connector.objects.get(pk=connector.pk).error_count >= 1)
    _birth(node)
    assert pump(supervisor, lambda: SignalSample.objects.filter(signal=signals["vibration"]).exists())
    assert Connector.objects.get(pk=connector.pk).status == Connector.Status.CONNECTED


def test_metric_timestamps_are_the_sample_times(plant, supervisor):
    _connector, node, signals = plant
    _birth(node)
    message = Payload(timestamp=_ms(), seq=2)
    stamp = _ms(-30)
    message.metrics.add(alias=10, timestamp=stamp, datatype=DOUBLE, double_value=3.3)
    node.send("DDATA", message.SerializeToString(), device="pump")
    assert pump(supervisor, lambda: SignalSample.objects.filter(signal=signals["vibration"], value=3.3).exists())
    sample = SignalSample.objects.get(signal=signals["vibration"], value=3.3)
    assert abs(sample.time.timestamp() * 1000 - stamp) < 1
    assert sample.time < timezone.now()


def test_a_metric_name_with_a_nul_is_listed_as_unknown_and_the_status_keeps_being_written(plant, supervisor):
    """PostgreSQL stores no NUL in text or jsonb: the unknown-tag list (and an error naming the metric)
    failed to write, was put back, and failed again every round — the connector's status, counters and
    last message froze while its samples still came in."""
    connector, node, signals = plant
    _birth(node)
    node.send("NDATA", payload(2, ("Motor\x00Speed", 30, 1480.0), (None, 99, 1.0)))  # unmapped; alias never born
    assert pump(supervisor, lambda: Connector.objects.get(pk=connector.pk).unknown_tag_count == 1)
    connector.refresh_from_db()
    assert connector.unknown_tags == [f"{node.group}/edge1/Motor\ufffdSpeed"]
    node.send("DDATA", payload(3, (None, 10, 2.7)), device="pump")
    assert pump(supervisor, lambda: SignalSample.objects.filter(signal=signals["vibration"], value=2.7).exists())
    assert pump(supervisor, lambda: Connector.objects.get(pk=connector.pk).messages_total >= 4)
    assert "\x00" not in Connector.objects.get(pk=connector.pk).last_error
