"""Helpers for the connector tests: the local broker (skip when it is not answering, except
under ARIA_REQUIRE_INTEGRATION=1), a publisher, and pumping the supervisor until a condition."""

from __future__ import annotations

import os
import socket
import time
import uuid
from collections.abc import Callable

import pytest

from sentinel.connectors.supervisor import ConnectorSupervisor
from sentinel.models import Connector

BROKER_HOST, BROKER_PORT = "127.0.0.1", 1883


def port_answers(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


def require_broker() -> None:
    if port_answers(BROKER_HOST, BROKER_PORT):
        return
    message = f"no MQTT broker on {BROKER_HOST}:{BROKER_PORT} (mosquitto -d)"
    if os.environ.get("ARIA_REQUIRE_INTEGRATION") == "1":
        pytest.fail(message)
    pytest.skip(message)


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def pump(supervisor: ConnectorSupervisor, until: Callable[[], object], timeout: float = 10.0) -> bool:
    """Run supervisor rounds (in this thread, on the test's database connection) until `until()`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        supervisor.tick()
        if until():
            return True
        time.sleep(0.05)
    return False


def status_of(connector: Connector) -> str:
    connector.refresh_from_db()
    return connector.status


class Publisher:
    """A plain paho client standing in for a gateway or an edge node."""

    def __init__(self) -> None:
        import paho.mqtt.client as mqtt
        from paho.mqtt.enums import CallbackAPIVersion

        self.received: list[tuple[str, bytes]] = []
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=unique("test-publisher"))
        self.client.on_message = lambda c, u, m: self.received.append((m.topic, bytes(m.payload)))
        self.client.connect(BROKER_HOST, BROKER_PORT)
        self.client.loop_start()

    def subscribe(self, topic: str) -> None:
        self.client.subscribe(topic, qos=1)
        time.sleep(0.3)

    def publish(self, topic: str, payload: bytes | str) -> None:
        self.client.publish(topic, payload, qos=1).wait_for_publish(5)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()
