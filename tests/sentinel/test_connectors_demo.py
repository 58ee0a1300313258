"""The demo over MQTT: seed_demo's `demo-mqtt` connector (off until `--via mqtt`), and the P-02
scenario published by the simulator, brought in by the connector and raising the alarm."""

from __future__ import annotations

import time

import pytest

from core.models import AuditRecord
from sentinel.connectors.supervisor import ConnectorSupervisor
from sentinel.models import Alarm, Connector, SignalSample
from sentinel.seed import DEMO_CONNECTOR, demo_connector_enable, demo_connector_seed
from sentinel.simulator import Simulator, _MqttPublisher
from tests.browser.live_server import free_port
from tests.sentinel.connector_helpers import pump, require_broker, status_of, unique
from tests.sentinel.factories import make_cell, make_signal

pytestmark = pytest.mark.django_db


def test_the_demo_connector_is_seeded_off_with_one_tag_per_onboarded_signal(vibration):
    make_signal(make_cell("X-99", onboarded=False), "flow_m3_h")
    connector = demo_connector_seed()
    assert connector.name == DEMO_CONNECTOR and not connector.enabled
    assert connector.endpoint == "mqtt://127.0.0.1:1883" and connector.kind == Connector.Kind.MQTT_JSON
    assert list(connector.tags.values_list("source", "signal_id")) == [("aria/demo/P-02/vibration_mm_s", vibration.pk)]

    temperature = make_signal(vibration.cell, "bearing_temp_c")
    demo_connector_seed()  # again: idempotent, picks up the new signal
    assert Connector.objects.count() == 1
    assert sorted(connector.tags.values_list("signal_id", flat=True)) == [vibration.pk, temperature.pk]


def test_an_unknown_via_is_refused():
    with pytest.raises(ValueError, match="--via"):
        Simulator(via="carrier-pigeon")


def test_the_p02_scenario_runs_over_mqtt_into_an_alarm(monkeypatch, vibration):
    require_broker()
    monkeypatch.setattr("sentinel.seed.DEMO_TOPIC_PREFIX", unique("aria-test-demo"))  # not a running demo's topics
    monkeypatch.setenv("ARIA_MQTT_URL", "mqtt://127.0.0.1:1883")
    connector = demo_connector_enable(lambda message: None)
    assert connector.enabled
    assert AuditRecord.objects.filter(action="connector.enabled", target_id=str(connector.pk)).exists()

    supervisor = ConnectorSupervisor(log=lambda message: None)
    simulator = Simulator(scenario="p02-bearing", via="mqtt", ramp_seconds=0, seed=1)
    try:
        assert pump(supervisor, lambda: status_of(connector) == Connector.Status.CONNECTED)
        time.sleep(0.3)

        def published_and_alarmed() -> bool:
            simulator.tick_mqtt()  # the ramp's end: 5.0 mm/s, over the 4.5 alert
            return Alarm.objects.filter(signal=vibration).exists()

        assert pump(supervisor, published_and_alarmed, 15)
    finally:
        supervisor.stop_all()
        if simulator.publisher is not None:
            simulator.publisher.close()
    assert SignalSample.objects.filter(signal=vibration, value__gt=4.5).exists()
    connector.refresh_from_db()
    assert connector.samples_total >= 1 and connector.unknown_tag_count == 0


def _publisher(monkeypatch, url: str, lines: list[str]) -> _MqttPublisher:
    monkeypatch.setenv("ARIA_MQTT_URL", url)
    return _MqttPublisher(lines.append)


def test_the_simulator_says_samples_are_dropped_while_not_connected_once_per_outage(monkeypatch):
    lines: list[str] = []
    publisher = _publisher(monkeypatch, f"mqtt://127.0.0.1:{free_port()}", lines)  # nothing listens there
    try:
        assert [publisher.publish("aria/test/x", "1") for _ in range(3)] == [0, 0, 0]
    finally:
        publisher.close()
    warnings = [line for line in lines if "not connected" in line]
    assert len(warnings) == 1 and "samples are dropped" in warnings[0]
    assert "rc 4" not in warnings[0] and "not currently connected" in warnings[0]  # paho's words, not a code
    assert publisher.unsent == 3


def test_the_simulator_publishes_to_a_reachable_broker_without_a_warning(monkeypatch):
    require_broker()
    lines: list[str] = []
    publisher = _publisher(monkeypatch, "mqtt://127.0.0.1:1883", lines)
    try:  # the first publish, straight after start: the publisher waited for the connection
        assert publisher.publish(unique("aria/test/simulator"), "1") == 1
    finally:
        publisher.close()
    assert not [line for line in lines if "not connected" in line] and publisher.unsent == 0
