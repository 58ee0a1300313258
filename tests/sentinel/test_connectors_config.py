"""A connector's settings fail closed and visibly at run time, against the local Mosquitto: a
stored row the admin form would refuse today (saved before the rule, or by a script) puts the
connector in `error` with a last error that names what is wrong, and never sends anything it
should not. A bad topic filter is retried with a growing delay; a credential variable outside
ARIA_CONNECTOR_… is never read."""

from __future__ import annotations

import json
import re
import time
from types import SimpleNamespace

import paho.mqtt.client as mqtt
import pytest

from sentinel.connectors.config import credential_env_problem, topic_filter_problem
from sentinel.connectors.feed import Feed
from sentinel.connectors.mqtt import MqttSession
from sentinel.connectors.supervisor import ConnectorSupervisor
from sentinel.models import Connector, ConnectorTag, SignalSample
from tests.sentinel.connector_helpers import Publisher, pump, require_broker, status_of, unique

pytestmark = pytest.mark.django_db


@pytest.fixture
def supervisor():
    supervisor = ConnectorSupervisor(log=lambda message: None)
    yield supervisor
    supervisor.stop_all()


def _connector(**fields) -> Connector:
    fields = {"kind": Connector.Kind.MQTT_JSON, "endpoint": "mqtt://127.0.0.1:1883", **fields}
    return Connector.objects.create(name=unique("aria-test"), **fields)


def test_a_stored_invalid_topic_filter_is_an_error_retried_with_backoff_then_fixed(supervisor, vibration):
    require_broker()
    connector = _connector(topic_filter="a/#/b")
    assert pump(supervisor, lambda: status_of(connector) == Connector.Status.ERROR), connector.last_error
    assert "'a/#/b'" in connector.last_error and "'#' must be alone in the last level" in connector.last_error
    assert connector.error_count >= 1

    # paho's thread lives on: it reconnects, fails again, and waits longer each time.
    assert pump(supervisor, lambda: Connector.objects.get(pk=connector.pk).error_count >= 3, timeout=20)
    connector.refresh_from_db()
    session = supervisor.running[connector.pk].session
    assert session.failures >= 3 and session.retry_delay == min(30, 2 ** (session.failures - 1))
    delay = int(re.search(r"\(retry in (\d+) s\)$", connector.last_error).group(1))
    assert delay in (4, 8, 16, 30)
    assert connector.status == Connector.Status.ERROR

    # Fixed in the row: the session restarts, subscribes and stores values.
    prefix = unique("aria-test")
    ConnectorTag.objects.create(connector=connector, source=f"{prefix}/vib", signal=vibration)
    connector.topic_filter = f"{prefix}/#"
    connector.save()
    supervisor._last_reload = -100.0
    assert pump(supervisor, lambda: status_of(connector) == Connector.Status.CONNECTED, timeout=15)
    publisher = Publisher()
    try:
        publisher.publish(f"{prefix}/vib", json.dumps({"value": 2.5}))
        assert pump(supervisor, lambda: SignalSample.objects.filter(signal=vibration).exists())
    finally:
        publisher.close()


def test_a_filter_the_broker_drops_the_client_for_is_an_error_retried_with_backoff():
    """MQTT allows it, Mosquitto does not (more than 200 levels): it closes the connection on the
    SUBSCRIBE. The session says so and waits longer each time (paho alone would retry every
    second, its delay reset by every accepted connection). A row cannot hold such a filter (300
    characters), so the session is given the settings directly."""
    require_broker()
    deep = "a/" * 250 + "b"
    settings = SimpleNamespace(
        pk=0, endpoint="mqtt://127.0.0.1:1883", topic_filter=deep, username_env="", password_env=""
    )
    feed = Feed({})
    session = MqttSession(settings, feed, sparkplug=False)
    errors: list[str] = []
    session.start()
    try:
        deadline = time.monotonic() + 15
        while len(errors) < 2 and time.monotonic() < deadline:
            drained = feed.drain()
            if drained.errors:
                errors.append(drained.last_error or "")
                assert drained.status == "error"
            time.sleep(0.05)
    finally:
        session.stop()
    assert len(errors) == 2, errors
    assert errors[0].startswith("the broker closed the connection on subscribing to 'a/a/a/")
    assert errors[0].endswith("(retry in 1 s)") and errors[1].endswith("(retry in 2 s)")


@pytest.mark.parametrize(
    ("endpoint", "said"),
    [
        ("mqtt://127.0.0.1:99999", "port must be a number from 1 to 65535"),
        ("mqtt://127.0.0.1:0", "port must be a number from 1 to 65535, not 0"),  # was quietly 1883
        ("opc.tcp://127.0.0.1:70000/aria", "port must be a number from 1 to 65535"),
        ("mqtt://", "endpoint must name a host"),
        ("opc.tcp:///aria", "endpoint must name a host"),  # asyncua would dial no host at all
    ],
)
def test_a_stored_endpoint_without_a_usable_port_or_host_never_connects(supervisor, endpoint, said):
    kind = Connector.Kind.OPCUA if endpoint.startswith("opc") else Connector.Kind.MQTT_JSON
    connector = _connector(kind=kind, endpoint=endpoint)
    assert pump(supervisor, lambda: status_of(connector) == Connector.Status.ERROR)
    assert said in connector.last_error and connector.error_count == 1
    assert supervisor.running[connector.pk].session is None


@pytest.mark.parametrize(
    ("fields", "said"),
    [
        ({"username_env": "SECRET_KEY"}, "username_env 'SECRET_KEY' refused: must start with ARIA_CONNECTOR_"),
        ({"password_env": "DATABASE_URL"}, "password_env 'DATABASE_URL' refused: must start with ARIA_CONNECTOR_"),
        ({"password_env": "ARIA_CONNECTOR_BACKLOG"}, "ARIA_CONNECTOR_BACKLOG is an ARIA setting"),
        ({"username_env": "ARIA_CONNECTOR_NOT_SET_ANYWHERE"}, "ARIA_CONNECTOR_NOT_SET_ANYWHERE, which is not set"),
    ],
)
def test_a_stored_credential_name_outside_the_prefix_is_never_read(supervisor, monkeypatch, fields, said):
    """The connector is in error before any connection: no session, so nothing went to the broker."""
    monkeypatch.setenv("SECRET_KEY", "the-django-secret-key")
    monkeypatch.setenv("DATABASE_URL", "postgres://aria:db-password@db/aria")
    connector = _connector(**fields)
    assert pump(supervisor, lambda: status_of(connector) == Connector.Status.ERROR)
    assert said in connector.last_error and connector.error_count == 1
    assert "the-django-secret-key" not in connector.last_error and "db-password" not in connector.last_error
    assert supervisor.running[connector.pk].session is None


def test_credentials_named_with_the_prefix_are_sent(supervisor, monkeypatch):
    require_broker()
    monkeypatch.setenv("ARIA_CONNECTOR_TEST_MQTT_USER", "edge-1")
    monkeypatch.setenv("ARIA_CONNECTOR_TEST_MQTT_PASSWORD", "broker-pass")
    connector = _connector(
        topic_filter=f"{unique('aria-test')}/#",
        username_env="ARIA_CONNECTOR_TEST_MQTT_USER",
        password_env="ARIA_CONNECTOR_TEST_MQTT_PASSWORD",
    )
    assert pump(supervisor, lambda: status_of(connector) == Connector.Status.CONNECTED), connector.last_error
    client = supervisor.running[connector.pk].session.client
    assert (client.username, client.password) == ("edge-1", "broker-pass")


FILTERS = [
    "#",
    "+",
    "plant/#",
    "plant/+/vib",
    "+/+/#",
    "/",
    "plant//vib",
    "spBv1.0/#",
    "a/#/b",
    "#/a",
    "a/b#",
    "a/#b",
    "a/+b",
    "a/b+/c",
    "++",
    "##",
    "",
]


@pytest.mark.parametrize("topic_filter", FILTERS)
def test_the_topic_filter_rule_agrees_with_paho(topic_filter):
    """paho has no public validator; its subscribe() uses this check and raises on it."""
    paho_ok = mqtt.Client._filter_wildcard_len_check(topic_filter.encode()) == mqtt.MQTT_ERR_SUCCESS
    assert (topic_filter_problem(topic_filter) is None) == paho_ok


def test_a_nul_or_a_lone_surrogate_in_a_topic_filter_is_refused():
    assert "NUL" in topic_filter_problem("plant/\x00/#")
    assert "UTF-8" in topic_filter_problem("plant/\ud800/#")


@pytest.mark.parametrize(
    ("name", "allowed"),
    [
        ("ARIA_CONNECTOR_PLANT_MQTT_USER", True),
        ("ARIA_CONNECTOR_", False),
        ("aria_connector_PLANT", False),
        ("SECRET_KEY", False),
        ("ARIA_CONNECTOR_INGEST_LANES", False),
        ("ARIA_CONNECTOR_X=1", False),
    ],
)
def test_credential_names(name, allowed):
    assert (credential_env_problem(name) is None) == allowed


def test_a_connector_that_cannot_start_is_tried_again_later_with_a_growing_delay(monkeypatch):
    """Its row unchanged: what it lacked (here a credential variable; in a plant, a certificate
    file put in place) is looked for again after 5 s, then 10 s, … — before, only an edit of the
    row brought it back."""
    require_broker()
    clock = [1000.0]
    supervisor = ConnectorSupervisor(log=lambda message: None, clock=lambda: clock[0])
    try:
        connector = _connector(topic_filter=f"{unique('aria-test')}/#", username_env="ARIA_CONNECTOR_TEST_LATE_USER")
        supervisor.reload()
        supervisor.tick()
        assert status_of(connector) == Connector.Status.ERROR
        assert connector.last_error.endswith(
            "ARIA_CONNECTOR_TEST_LATE_USER, which is not set in the connectors process (retry in 5 s)"
        )

        clock[0] += 4.9  # not due yet: no second attempt
        supervisor.reload()
        assert supervisor.running[connector.pk].failed_starts == 1
        clock[0] += 0.2  # due, still missing: the next delay doubles
        supervisor.reload()
        supervisor.tick()
        assert supervisor.running[connector.pk].failed_starts == 2
        assert status_of(connector) == Connector.Status.ERROR and connector.last_error.endswith("(retry in 10 s)")

        monkeypatch.setenv("ARIA_CONNECTOR_TEST_LATE_USER", "edge-1")
        clock[0] += 10
        supervisor.reload()
        assert pump(supervisor, lambda: status_of(connector) == Connector.Status.CONNECTED), connector.last_error
        assert supervisor.running[connector.pk].session.client.username == "edge-1"
    finally:
        supervisor.stop_all()
