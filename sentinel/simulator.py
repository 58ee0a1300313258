"""Demo data feed: realistic noisy values for every enabled signal of the onboarded cells, sent
through the ingest service once per interval. Scenarios bend some signals over time.

`Simulator(...).run(stop_event)` is what `manage.py simulate` runs and what a run-all command
can start in a thread.
"""

from __future__ import annotations

import json
import logging
import random
import threading
import time as monotonic_time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import close_old_connections, connection
from django.utils import timezone

from sentinel.connectors.mqtt import broker_address
from sentinel.models import SignalDefinition
from sentinel.plant import spec_for
from sentinel.seed import demo_topic, mqtt_url
from sentinel.services import IngestResult, samples_ingest

logger = logging.getLogger(__name__)

# A scenario maps (cell tag, signal key) to a function of ramp progress 0..1 → target value.
Ramp = Callable[[float], float]


def _linear(start: float, end: float, *, ease: float = 1.0) -> Ramp:
    return lambda p: start + (end - start) * (p**ease)


@dataclass(frozen=True)
class Scenario:
    name: str
    description: str
    ramps: dict[tuple[str, str], Ramp]
    default_ramp_seconds: float = 90.0


SCENARIOS: dict[str, Scenario] = {
    "p02-bearing": Scenario(
        "p02-bearing",
        "P-02 bearing wear: vibration 2.1 → 5.0 mm/s (alert 4.5), bearing temperature up ~17 °C.",
        {
            ("P-02", "vibration_mm_s"): _linear(2.1, 5.0, ease=1.3),
            ("P-02", "bearing_temp_c"): _linear(58.0, 75.0),
            ("P-02", "motor_current_a"): _linear(41.0, 42.5),
        },
    ),
}


@dataclass
class _Channel:
    signal_id: int
    tag: str
    key: str
    nominal: float
    noise: float
    deviation: float = 0.0


def _nominal(signal: SignalDefinition) -> tuple[float, float]:
    """Normal value and noise: from the demo plant spec, else the middle of the normal band."""
    spec = spec_for(signal.cell.tag, signal.key)
    if spec is not None:
        return spec.nominal, spec.noise
    high = min((v for v in (signal.alert, signal.high_alert, signal.trip) if v is not None), default=None)
    if high is not None and signal.low_alert is not None:
        nominal = (high + signal.low_alert) / 2
    elif high is not None:
        nominal = high * 0.5
    elif signal.low_alert is not None:
        nominal = signal.low_alert * 1.5
    else:
        nominal = 1.0
    return nominal, abs(nominal) * 0.01 or 0.01


class Simulator:
    def __init__(
        self,
        *,
        scenario: str | None = None,
        interval: float = 1.0,
        ramp_seconds: float | None = None,
        seed: int | None = None,
        log: Callable[[str], None] | None = None,
        via: str = "service",
    ) -> None:
        if via not in ("service", "mqtt"):
            raise ValueError(f"Unknown --via {via!r}; known: service, mqtt")
        self.via = via
        self.publisher: Any = None
        if scenario is not None and scenario not in SCENARIOS:
            raise ValueError(f"Unknown scenario {scenario!r}; known: {', '.join(SCENARIOS)}")
        self.scenario = SCENARIOS[scenario] if scenario else None
        self.interval = interval
        self.ramp_seconds = (
            ramp_seconds if ramp_seconds is not None else (self.scenario.default_ramp_seconds if self.scenario else 0)
        )
        self.rng = random.Random(seed)
        self.log = log or (lambda message: logger.info(message))
        self.started_at: datetime | None = None
        self.channels: list[_Channel] = []
        self.ticks = 0

    def load(self) -> None:
        signals = SignalDefinition.objects.filter(enabled=True, cell__onboarding_complete=True).select_related("cell")
        known = {c.signal_id: c for c in self.channels}
        self.channels = []
        for signal in signals.order_by("pk"):
            nominal, noise = _nominal(signal)
            channel = known.get(signal.pk) or _Channel(signal.pk, signal.cell.tag, signal.key, nominal, noise)
            self.channels.append(channel)

    def progress(self, now: datetime) -> float:
        if self.scenario is None or self.started_at is None:
            return 0.0
        if self.ramp_seconds <= 0:
            return 1.0
        return min(1.0, (now - self.started_at).total_seconds() / self.ramp_seconds)

    def value(self, channel: _Channel, now: datetime) -> float:
        # Mean-reverting noise (AR(1)) looks like a real transmitter, not white noise.
        channel.deviation = 0.7 * channel.deviation + self.rng.gauss(0, channel.noise)
        target = channel.nominal
        ramp = self.scenario.ramps.get((channel.tag, channel.key)) if self.scenario else None
        if ramp is not None:
            target = ramp(self.progress(now))
        return round(target + channel.deviation, 4)

    def tick(self, now: datetime | None = None) -> IngestResult:
        now = now or timezone.now()
        if self.started_at is None:
            self.started_at = now
        if not self.channels or self.ticks % 60 == 0:
            self.load()  # pick up signals added while running
        self.ticks += 1
        rows = [(c.signal_id, now, self.value(c, now)) for c in self.channels]
        result = samples_ingest(samples=rows, now=now)
        if result.evaluation.raised:
            self.log(f"simulate: alarms raised {result.evaluation.raised}")
        return result

    def tick_mqtt(self, now: datetime | None = None) -> int:
        """One round published to the broker (`--via mqtt`): `{"value", "time"}` on
        `aria/demo/<cell tag>/<signal key>`, which the seeded demo connector maps. Returns how
        many values were handed to the client."""

        now = now or timezone.now()
        if self.started_at is None:
            self.started_at = now
        if not self.channels or self.ticks % 60 == 0:
            self.load()
        self.ticks += 1
        if self.publisher is None:
            self.publisher = _MqttPublisher(self.log)
        sent = 0
        for channel in self.channels:
            body = json.dumps({"value": self.value(channel, now), "time": now.isoformat()})
            sent += self.publisher.publish(demo_topic(channel.tag, channel.key), body)
        return sent

    def run(self, stop_event: threading.Event | None = None, *, once: bool = False) -> None:
        """Feed until `stop_event` is set (or one tick with `once`). Errors are logged, not fatal."""
        stop_event = stop_event or threading.Event()
        name = self.scenario.name if self.scenario else "steady"
        self.log(f"simulate: scenario {name}, every {self.interval:g}s, via {self.via}")
        try:
            while not stop_event.is_set():
                started = monotonic_time.monotonic()
                if not connection.in_atomic_block:  # (never inside a caller's transaction, e.g. a test)
                    close_old_connections()
                try:
                    self.tick_mqtt() if self.via == "mqtt" else self.tick()
                except Exception:
                    logger.exception("simulate: tick failed")
                if once:
                    break
                stop_event.wait(max(0.0, self.interval - (monotonic_time.monotonic() - started)))
        finally:
            if self.publisher is not None:
                self.publisher.close()
            if threading.current_thread() is not threading.main_thread():
                connection.close()


CONNECT_WAIT_SECONDS = 3.0


class _MqttPublisher:
    """The simulator's MQTT client (paho, reconnecting in its own thread) for ARIA_MQTT_URL."""

    def __init__(self, log: Callable[[str], None]) -> None:
        import paho.mqtt.client as mqtt  # lazy: MQTT only for --via mqtt
        from paho.mqtt.enums import CallbackAPIVersion

        url = mqtt_url()
        host, port, tls = broker_address(url)
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=f"aria-simulator-{id(self)}")
        if tls:
            self.client.tls_set()
        self.client.reconnect_delay_set(1, 10)
        connected = threading.Event()
        self.client.on_connect = lambda client, userdata, flags, reason, properties: connected.set()
        self.client.connect_async(host, port, keepalive=30)
        self.client.loop_start()
        # The first tick waits for the first connection (briefly: a broker that is down is told
        # by the first publish), so a demo's first seconds are not dropped.
        connected.wait(CONNECT_WAIT_SECONDS)
        log(f"simulate: publishing to {url}")
        self._log, self._error_string = log, mqtt.error_string
        self.unsent = 0  # samples not published since the client was last connected

    def publish(self, topic: str, body: str) -> int:
        """1 when handed to the client, else 0: while it is not connected (at start, before the
        first connect completes, or after the broker went away) a sample is dropped, not queued:
        a simulator's stale readings are worth nothing. Told once per outage, and again, with the
        count, when publishing resumes."""
        info = self.client.publish(topic, body, qos=0)
        if info.rc != 0:
            if not self.unsent:
                self._log(
                    f"simulate: not connected to the broker ({self._error_string(info.rc)}): "
                    "samples are dropped until the client connects (it retries every 1-10 s)"
                )
            self.unsent += 1
            return 0
        if self.unsent:
            self._log(f"simulate: publishing again; {self.unsent} sample(s) were dropped while not connected")
            self.unsent = 0
        return 1

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


# --- alarm flood (the alarm-performance page's demo and tests) --------------------------------
# Over 10 minutes: ten signals of P-02, C-01 and CV-03 leave their band one after another (a flood),
# C-01's discharge pressure swings across its alert limit every 4 s (chattering) and P-02's motor
# current spikes past its alert for ~2 s every 35 s (fleeting; too sparse to count as chattering).
_FLOOD_SECONDS = 600.0


def _pulse(base: float, level: float, start: float, end: float) -> Ramp:
    """`level` while start ≤ progress < end, else `base`."""
    return lambda p: level if start <= p < end else base


def _square(base: float, low: float, high: float, start: float, end: float, *, period_s: float) -> Ramp:
    """Between start and end, `high` for the first half of every `period_s`, `low` for the second."""
    period = period_s / _FLOOD_SECONDS
    return lambda p: (high if ((p - start) % period) < period / 2 else low) if start <= p < end else base


def _spikes(base: float, level: float, start: float, end: float, *, every_s: float, width_s: float) -> Ramp:
    every, width = every_s / _FLOOD_SECONDS, width_s / _FLOOD_SECONDS
    return lambda p: level if start <= p < end and ((p - start) % every) < width else base


SCENARIOS["flood"] = Scenario(
    "flood",
    "Alarm flood: ten signals leave their band within ~70 s, C-01 discharge pressure chatters, "
    "P-02 motor current spikes for 2 s every 35 s (fleeting).",
    {
        ("P-02", "vibration_mm_s"): _pulse(2.1, 5.0, 0.20, 0.45),
        ("P-02", "bearing_temp_c"): _pulse(58.0, 82.0, 0.21, 0.45),
        ("P-02", "discharge_pressure_bar"): _pulse(6.2, 2.5, 0.22, 0.45),
        ("P-02", "flow_m3_h"): _pulse(120.0, 70.0, 0.23, 0.45),
        ("P-02", "suction_pressure_bar"): _pulse(1.6, 0.6, 0.24, 0.45),
        ("C-01", "vibration_mm_s"): _pulse(1.8, 5.0, 0.25, 0.45),
        ("C-01", "discharge_temp_c"): _pulse(82.0, 102.0, 0.26, 0.45),
        ("CV-03", "vibration_mm_s"): _pulse(1.4, 5.0, 0.27, 0.45),
        ("CV-03", "gearbox_temp_c"): _pulse(61.0, 87.0, 0.28, 0.45),
        ("CV-03", "belt_speed_m_s"): _pulse(1.8, 1.0, 0.29, 0.45),
        ("C-01", "discharge_pressure_bar"): _square(7.8, 9.2, 9.7, 0.30, 0.70, period_s=4),
        ("P-02", "motor_current_a"): _spikes(41.0, 54.0, 0.10, 0.90, every_s=35, width_s=2),
    },
    default_ramp_seconds=_FLOOD_SECONDS,
)

# The fault library's faults the live demo can play (sentinel/fault_scenarios.py; eval_rca scores them).
from sentinel.fault_scenarios import simulator_ramps  # noqa: E402

for _name, (_description, _ramps) in simulator_ramps().items():
    SCENARIOS[_name] = Scenario(_name, _description, _ramps, default_ramp_seconds=300.0)
