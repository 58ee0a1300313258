"""MQTT sessions (paho-mqtt 2.x): JSON topics and Sparkplug B, reconnecting with backoff."""

from __future__ import annotations

import logging
import os
import socket
import ssl
import threading
import time
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from sentinel.connectors.config import (
    credentials,
    endpoint_host_problem,
    endpoint_port_problem,
    topic_filter_problem,
)
from sentinel.connectors.feed import Feed
from sentinel.connectors.payloads import (
    MAX_EDGE_NODES,
    SPARKPLUG_NAMESPACE,
    PayloadError,
    SparkplugState,
    json_values,
    rebirth_request,
    sparkplug_topic,
)

logger = logging.getLogger(__name__)

RECONNECT_MIN_SECONDS = 1
RECONNECT_MAX_SECONDS = 30
REBIRTH_EVERY_SECONDS = 5.0


def broker_address(endpoint: str) -> tuple[str, int, bool]:
    """mqtt://host[:1883] or mqtts://host[:8883] → (host, port, tls); ValueError otherwise."""
    problem = endpoint_port_problem(endpoint) or endpoint_host_problem(endpoint)
    if problem:
        raise ValueError(f"endpoint {problem}")
    parts = urlsplit(endpoint.strip())
    if parts.scheme not in ("mqtt", "mqtts", "tcp", "ssl") or not parts.hostname:
        raise ValueError("endpoint must be mqtt://host[:port] or mqtts://host[:port]")
    tls = parts.scheme in ("mqtts", "ssl")
    return parts.hostname, parts.port or (8883 if tls else 1883), tls


class MqttSession:
    """One MQTT connection of a connector. `sparkplug` switches the payload format.

    "connected" means subscribed (the broker granted the filter). Anything that goes wrong in
    paho's connect or subscribe callbacks (a bad stored filter, a filter the broker refuses) is an
    error on the connector, not an exception that would end paho's thread unseen: the session
    drops the connection and paho reconnects after 1, 2, 4 … 30 s (`retry_delay`)."""

    def __init__(self, connector: Any, feed: Feed, *, sparkplug: bool) -> None:
        self.feed = feed
        self.sparkplug = SparkplugState(feed) if sparkplug else None
        self.host, self.port, tls = broker_address(connector.endpoint)
        default_filter = f"{SPARKPLUG_NAMESPACE}/#" if sparkplug else "#"
        self.topic_filter = connector.topic_filter or default_filter
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=f"aria-{connector.pk}-{os.getpid()}")
        username, password = credentials(connector.username_env, connector.password_env)
        if username or password:
            self.client.username_pw_set(username, password)
        if tls:
            self.client.tls_set(cert_reqs=ssl.CERT_REQUIRED)
        self.client.reconnect_delay_set(RECONNECT_MIN_SECONDS, RECONNECT_MAX_SECONDS)
        self.client.on_connect = self._on_connect
        self.client.on_connect_fail = self._on_connect_fail
        self.client.on_disconnect = self._on_disconnect
        self.client.on_message = self._on_message
        self.client.on_subscribe = self._on_subscribe
        self._rebirth_asked: dict[str, float] = {}
        self._lock = threading.Lock()
        self.failures = 0  # callback failures since the last granted subscription
        self.retry_delay = 0  # seconds paho waits before the next connection after one
        self._dropping = False  # the session itself closed the socket: not a second error
        self._subscribing = False  # subscribed, the broker's answer not yet in
        shown = self.topic_filter if len(self.topic_filter) <= 100 else f"{self.topic_filter[:100]}…"
        self._filter_shown = repr(shown)  # in errors (500 characters at most, the retry delay last)

    def start(self) -> None:
        self.feed.status("connecting")
        self.client.connect_async(self.host, self.port, keepalive=30)
        self.client.loop_start()

    def stop(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()

    # paho callbacks (its network thread) ---------------------------------------------------
    def _on_connect(self, client: mqtt.Client, userdata: Any, flags: Any, reason: Any, properties: Any) -> None:
        if reason.is_failure:
            self.feed.error(f"broker refused the connection: {reason}", status="error")
            return
        try:
            problem = topic_filter_problem(self.topic_filter)  # a row saved before the form checked it
            if problem:
                raise ValueError(problem)
            result, _mid = client.subscribe(self.topic_filter, qos=1)
            if result != mqtt.MQTT_ERR_SUCCESS:
                raise RuntimeError(mqtt.error_string(result))
            self._subscribing = True
        except Exception as error:  # paho would end its thread on it and nobody would know
            logger.warning("connector: subscribing to %r failed", self.topic_filter, exc_info=True)
            self._fail_and_reconnect(client, f"cannot subscribe to topic filter {self._filter_shown}: {error}")

    def _on_subscribe(self, client: mqtt.Client, userdata: Any, mid: int, reasons: Any, properties: Any) -> None:
        self._subscribing = False
        refused = [reason for reason in reasons if reason.is_failure]
        if refused:
            self._fail_and_reconnect(client, f"broker refused the subscription to {self._filter_shown}: {refused[0]}")
            return
        if self.failures:
            self.failures, self.retry_delay = 0, 0
            client.reconnect_delay_set(RECONNECT_MIN_SECONDS, RECONNECT_MAX_SECONDS)
        self.feed.status("connected")

    def _report_failure(self, client: mqtt.Client, message: str) -> None:
        """Report `message` as an error; paho's loop reconnects after `retry_delay`, doubled at
        each failure (paho itself resets its delay at every accepted connection, which would
        retry a broken subscription every second)."""
        self.failures += 1
        self.retry_delay = min(RECONNECT_MAX_SECONDS, RECONNECT_MIN_SECONDS * 2 ** min(self.failures - 1, 10))
        self.feed.error(f"{message} (retry in {self.retry_delay} s)", status="error")
        client.reconnect_delay_set(self.retry_delay, RECONNECT_MAX_SECONDS)

    def _fail_and_reconnect(self, client: mqtt.Client, message: str) -> None:
        """`_report_failure`, and drop the connection so that paho reconnects."""
        self._subscribing = False
        self._report_failure(client, message)
        sock = client.socket()
        if isinstance(sock, socket.socket):  # TCP or TLS (ARIA uses no websockets transport)
            self._dropping = True
            try:
                sock.shutdown(socket.SHUT_RDWR)  # paho sees the connection lost and reconnects
            except OSError:
                logger.debug("connector: closing the socket failed", exc_info=True)

    def _on_connect_fail(self, client: mqtt.Client, userdata: Any) -> None:
        self.feed.error(f"cannot reach the broker at {self.host}:{self.port}", status="error")

    def _on_disconnect(self, client: mqtt.Client, userdata: Any, flags: Any, reason: Any, properties: Any) -> None:
        if self._dropping:  # _fail_and_reconnect closed it and said why
            self._dropping = False
            return
        if not reason.is_failure:  # our own disconnect()
            return
        if self._subscribing:  # e.g. Mosquitto drops a client whose filter is over 200 levels deep
            self._subscribing = False
            self._report_failure(
                client, f"the broker closed the connection on subscribing to {self._filter_shown}: {reason}"
            )
            return
        self.feed.error(f"disconnected from the broker: {reason}", status="error")

    def _on_message(self, client: mqtt.Client, userdata: Any, message: mqtt.MQTTMessage) -> None:
        received_at = datetime.now(UTC)
        self.feed.message()
        try:
            if self.sparkplug is not None:
                self._sparkplug(message, received_at)
            else:
                self.feed.samples(message.topic, json_values(bytes(message.payload), received_at))
        except PayloadError as error:
            self.feed.error(f"{message.topic[:200]}: {error}")
        except Exception as error:  # hostile input must never stop the session
            logger.exception("connector: message on %r failed", message.topic)
            self.feed.error(f"{message.topic[:200]}: {type(error).__name__}")

    def _sparkplug(self, message: mqtt.MQTTMessage, received_at: datetime) -> None:
        assert self.sparkplug is not None
        topic = sparkplug_topic(message.topic)
        if topic is None or topic.message_type in ("NCMD", "DCMD", "STATE"):
            return
        if self.sparkplug.handle(topic, bytes(message.payload), received_at):
            self._ask_rebirth(topic.group, topic.node)

    def _ask_rebirth(self, group: str, node: str) -> None:
        key, now = f"{group}/{node}", time.monotonic()
        with self._lock:
            asked = self._rebirth_asked
            if now - asked.get(key, -REBIRTH_EVERY_SECONDS) < REBIRTH_EVERY_SECONDS:
                return
            if len(asked) >= MAX_EDGE_NODES:  # bounded: forget the asks that no longer hold anything back
                for stale in [k for k, at in asked.items() if now - at >= REBIRTH_EVERY_SECONDS]:
                    del asked[stale]
                if len(asked) >= MAX_EDGE_NODES:
                    return
            asked[key] = now
        payload = rebirth_request(int(time.time() * 1000))
        self.client.publish(f"{SPARKPLUG_NAMESPACE}/{group}/NCMD/{node}", payload, qos=0)
