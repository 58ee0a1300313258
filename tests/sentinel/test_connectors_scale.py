"""The connector path at plant scale: a DDATA of hundreds of metrics is mapped in one pass, a flood
of unmapped tags costs bounded memory yet is fully counted, and a supervisor reload does not read
every tag of a 50k-tag connector (its queries do not grow with the mapping)."""

from __future__ import annotations

import math
import time
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.db.models.signals import post_init
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from sentinel.connectors.feed import MAX_UNKNOWN_LISTED, Feed, TagTarget
from sentinel.connectors.payloads import PayloadError, SparkplugState, sparkplug_topic
from sentinel.connectors.services import connector_status_record
from sentinel.connectors.sparkplug_b_pb2 import Payload
from sentinel.connectors.supervisor import ConnectorSupervisor
from sentinel.models import Connector, ConnectorTag
from tests.sentinel.factories import make_signal

DOUBLE = 10
METRICS = 500


def _born_node(feed: Feed, metrics: int = METRICS) -> SparkplugState:
    """An edge node `g/n` whose device `d` announced `metrics` metrics m0… with aliases 0…"""
    state = SparkplugState(feed)
    now = int(time.time() * 1000)
    birth = Payload(timestamp=now, seq=0)
    birth.metrics.add(name="bdSeq", datatype=4, long_value=0)
    state.handle(sparkplug_topic("spBv1.0/g/NBIRTH/n"), birth.SerializeToString(), datetime.now(UTC))
    device = Payload(timestamp=now, seq=1)
    for i in range(metrics):
        device.metrics.add(name=f"m{i}", alias=i, timestamp=now, datatype=DOUBLE, double_value=0.0)
    state.handle(sparkplug_topic("spBv1.0/g/DBIRTH/n/d"), device.SerializeToString(), datetime.now(UTC))
    feed.drain()
    return state


def _ddata(seq: int, values: list[float], ms: int) -> bytes:
    message = Payload(timestamp=ms, seq=seq)
    for alias, value in enumerate(values):
        message.metrics.add(alias=alias, timestamp=ms, datatype=DOUBLE, double_value=value)
    return message.SerializeToString()


def test_a_ddata_of_hundreds_of_metrics_by_alias_is_mapped_scaled_and_timed():
    tags = {f"g/n/d/m{i}": TagTarget(1000 + i) for i in range(METRICS)}
    tags["g/n/d/m7"] = TagTarget(1007, scale=0.1, offset=2.0)
    feed = Feed(tags)
    state = _born_node(feed)
    ms = int(time.time() * 1000) - 1500
    state.handle(
        sparkplug_topic("spBv1.0/g/DDATA/n/d"), _ddata(2, [float(i) for i in range(METRICS)], ms), datetime.now(UTC)
    )

    drained = feed.drain()
    assert len(drained.samples) == METRICS and drained.errors == 0 and drained.unknown_total == 0
    assert drained.samples[0] == (1000, datetime.fromtimestamp(ms / 1000, UTC), 0.0)
    assert drained.samples[7][2] == pytest.approx(7 * 0.1 + 2.0)
    assert {t for _, t, _ in drained.samples} == {datetime.fromtimestamp(ms / 1000, UTC)}
    assert drained.latest_time == datetime.fromtimestamp(ms / 1000, UTC)


def test_a_non_finite_value_mid_message_is_an_error_and_keeps_what_came_before():
    feed = Feed({f"g/n/d/m{i}": TagTarget(i) for i in range(4)})
    state = _born_node(feed, metrics=4)
    with pytest.raises(PayloadError, match="finite"):
        state.handle(
            sparkplug_topic("spBv1.0/g/DDATA/n/d"),
            _ddata(2, [1.0, 2.0, math.inf, 4.0], 1_700_000_000_000),
            datetime.now(UTC),
        )
    assert [v for _, _, v in feed.drain().samples] == [1.0, 2.0]


def test_a_timestamp_beyond_any_date_is_a_payload_error_not_a_crash():
    feed = Feed({"g/n/d/m0": TagTarget(1)})
    state = _born_node(feed, metrics=1)
    with pytest.raises(PayloadError, match="timestamp out of range"):
        state.handle(sparkplug_topic("spBv1.0/g/DDATA/n/d"), _ddata(2, [1.0], 2**63), datetime.now(UTC))
    assert feed.drain().samples == []


def test_a_nameless_metric_without_an_alias_is_not_taken_for_alias_zero():
    feed = Feed({"g/n/d/m0": TagTarget(1)})
    state = _born_node(feed, metrics=1)
    message = Payload(timestamp=1_700_000_000_000, seq=2)
    message.metrics.add(timestamp=1_700_000_000_000, datatype=DOUBLE, double_value=9.0)  # no name, no alias
    message.metrics.add(alias=0, timestamp=1_700_000_000_000, datatype=DOUBLE, double_value=3.0)
    state.handle(sparkplug_topic("spBv1.0/g/DDATA/n/d"), message.SerializeToString(), datetime.now(UTC))
    drained = feed.drain()
    assert [v for _, _, v in drained.samples] == [3.0]
    assert drained.errors == 1 and "alias 0 was not announced" in drained.last_error


def test_a_flood_of_unmapped_tags_is_counted_in_full_and_named_in_bounded_memory():
    feed = Feed({"plant/known": TagTarget(1)})
    at = datetime.now(UTC)
    for i in range(20_000):
        feed.sample(f"plant/unmapped/{i}", at, 1.0)
    feed.samples("plant/unmapped/0", [(at, 2.0), (at, 3.0)])
    feed.sample("plant/known", at, 4.0)

    drained = feed.drain()
    assert drained.unknown_total == 20_002 and len(drained.samples) == 1
    assert len(drained.unknown) == MAX_UNKNOWN_LISTED
    assert drained.unknown["plant/unmapped/0"] == 3  # the first ones seen are the ones named


def test_counters_put_back_after_a_failed_status_write_are_reported_once():
    feed = Feed({})
    at = datetime.now(UTC)
    for i in range(60):
        feed.sample(f"x/{i}", at, 1.0)
    first = feed.drain()
    feed.sample("x/0", at, 1.0)
    feed.put_back(first)
    drained = feed.drain()
    assert drained.unknown_total == 61 and len(drained.unknown) == MAX_UNKNOWN_LISTED
    assert drained.samples == []  # samples live in the supervisor's backlog, never put back


@pytest.mark.django_db
def test_the_status_row_counts_every_unknown_value_and_lists_at_most_fifty(cell):
    connector = Connector.objects.create(name="flood", kind=Connector.Kind.MQTT_JSON, endpoint="mqtt://127.0.0.1:1")
    feed = Feed({})
    at = datetime.now(UTC)
    for i in range(5_000):
        feed.sample(f"plant/{i:05d}", at, 1.0)
    connector_status_record(connector_id=connector.pk, drained=feed.drain(), samples=0, rate=0.0, now=timezone.now())
    connector.refresh_from_db()
    assert connector.unknown_tag_count == 5_000
    assert len(connector.unknown_tags) == MAX_UNKNOWN_LISTED and "plant/00000" in connector.unknown_tags


def _mapped_connector(cell, n: int, name: str) -> Connector:
    connector = Connector.objects.create(
        name=name, kind=Connector.Kind.MQTT_SPARKPLUG_B, endpoint="mqtt://127.0.0.1:1", topic_filter="none/#"
    )
    signals = [make_signal(cell, f"{name}_{i}") for i in range(n)]
    ConnectorTag.objects.bulk_create(
        [ConnectorTag(connector=connector, source=f"g/n/d/{name}{i}", signal=s) for i, s in enumerate(signals)]
    )
    return connector


def _reload_cost(supervisor: ConnectorSupervisor) -> tuple[int, int]:
    """(queries, ConnectorTag objects built) of one reload."""
    built = []

    def count(sender, instance, **kwargs):
        built.append(instance)

    post_init.connect(count, sender=ConnectorTag)
    try:
        with CaptureQueriesContext(connection) as queries:
            supervisor.reload()
    finally:
        post_init.disconnect(count, sender=ConnectorTag)
    return len(queries), len(built)


@pytest.mark.django_db
def test_a_reload_builds_no_tag_objects_and_its_queries_do_not_grow_with_the_tags(cell):
    supervisor = ConnectorSupervisor(log=lambda message: None)
    small = _mapped_connector(cell, 3, "small")
    try:
        supervisor.reload()  # starts it (reads its tags once)
        few = _reload_cost(supervisor)
        Connector.objects.filter(pk=small.pk).update(enabled=False)
        supervisor.reload()
        _mapped_connector(cell, 300, "large")
        supervisor.reload()
        many = _reload_cost(supervisor)
    finally:
        supervisor.stop_all()
    assert few == many and many[1] == 0


@pytest.mark.django_db
def test_a_tag_changed_behind_the_admin_restarts_the_session_with_the_new_mapping(cell):
    supervisor = ConnectorSupervisor(log=lambda message: None)
    connector = _mapped_connector(cell, 3, "edit")
    try:
        supervisor.reload()
        assert supervisor.running[connector.pk].feed.tags["g/n/d/edit1"].scale == 1.0
        ConnectorTag.objects.filter(source="g/n/d/edit1").update(scale=0.5)  # updated_at untouched
        supervisor.reload()
        assert supervisor.running[connector.pk].feed.tags["g/n/d/edit1"].scale == 0.5
        ConnectorTag.objects.filter(source="g/n/d/edit2").update(source="g/n/d/edit9")  # same length
        supervisor.reload()
        assert "g/n/d/edit9" in supervisor.running[connector.pk].feed.tags
    finally:
        supervisor.stop_all()


@pytest.mark.django_db
def test_a_sample_in_the_future_is_refused_using_the_newest_time_the_feed_kept(cell):
    signal = make_signal(cell, "future_probe")
    connector = _mapped_connector(cell, 1, "future")
    ConnectorTag.objects.filter(connector=connector).update(signal=signal)
    supervisor = ConnectorSupervisor(log=lambda message: None)
    try:
        supervisor.reload()
        feed = supervisor.running[connector.pk].feed
        now = timezone.now()
        feed.samples("g/n/d/future0", [(now - timedelta(seconds=1), 1.0), (now + timedelta(minutes=10), 2.0)])
        supervisor.tick()
        # read before stopping: the session's own "cannot reach the broker" (its endpoint is a dead
        # port) may land later and is the connector's last error after that
        connector.refresh_from_db()
    finally:
        supervisor.stop_all()
    assert connector.samples_total == 1 and "in the future were refused" in connector.last_error


def _nbirth(state: SparkplugState, node: str) -> None:
    birth = Payload(timestamp=int(time.time() * 1000), seq=0)
    birth.metrics.add(name="bdSeq", datatype=4, long_value=0)
    state.handle(sparkplug_topic(f"spBv1.0/g/NBIRTH/{node}"), birth.SerializeToString(), datetime.now(UTC))


def test_births_are_remembered_within_bounds():
    """Whoever may publish on the broker could announce edge nodes, devices and metrics without end,
    each remembered by the connector until its process ran out of memory."""
    feed = Feed({})
    state = SparkplugState(feed, max_nodes=3, max_node_metrics=5)
    for node in ("n0", "n1", "n2"):
        _nbirth(state, node)
    with pytest.raises(PayloadError, match="more than 3 edge nodes"):
        _nbirth(state, "n3")
    _nbirth(state, "n1")  # a known node is born again as usual
    assert sorted(node for _, node in state.nodes) == ["n0", "n1", "n2"]

    now = int(time.time() * 1000)
    for device in ("d0", "d1"):
        birth = Payload(timestamp=now, seq=1 if device == "d0" else 2)
        for i in range(4):
            birth.metrics.add(name=f"m{i}", alias=i if device == "d0" else 10 + i, timestamp=now, datatype=DOUBLE)
        state.handle(sparkplug_topic(f"spBv1.0/g/DBIRTH/n0/{device}"), birth.SerializeToString(), datetime.now(UTC))
    node = state.nodes[("g", "n0")]
    assert len(node.aliases) + sum(len(s) for s in node.sources.values()) == 5  # bdSeq; m0, m1 and their aliases
    assert node.sources == {"": {"g/n0/bdSeq"}, "d0": {"g/n0/d0/m0", "g/n0/d0/m1"}, "d1": set()}
    assert "more than 5 metrics" in feed.drain().last_error


def test_rebirth_requests_are_remembered_within_bounds():
    """Data from a node never born asks it for a rebirth (at most every 5 s each): the memory of those
    asks kept every node name it ever saw."""
    import paho.mqtt.client as mqtt

    from sentinel.connectors.mqtt import MqttSession
    from sentinel.connectors.payloads import MAX_EDGE_NODES

    connector = Connector(pk=1, kind=Connector.Kind.MQTT_SPARKPLUG_B, endpoint="mqtt://127.0.0.1:1883")
    session = MqttSession(connector, Feed({}), sparkplug=True)  # not connected: the asks go nowhere
    body = _ddata(0, [1.0], int(time.time() * 1000))
    for i in range(MAX_EDGE_NODES + 50):
        message = mqtt.MQTTMessage(topic=f"spBv1.0/g/NDATA/stranger{i}".encode())
        message.payload = body
        session._on_message(session.client, None, message)
    assert len(session._rebirth_asked) == MAX_EDGE_NODES
