"""Demo plant for `manage.py seed_demo`: idempotent (natural keys; history only for signals
that have none). History goes through the ingest service, so latest values exist too."""

from __future__ import annotations

import math
import os
import random
from collections.abc import Callable
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from sentinel.connectors.services import connector_set_enabled
from sentinel.models import Cell, Connector, ConnectorTag, Line, SignalDefinition, SignalSample, Site
from sentinel.plant import CELLS, SITE
from sentinel.services import samples_ingest

HISTORY_HOURS = 4
HISTORY_STEP_SECONDS = 30
DEMO_CONNECTOR = "demo-mqtt"
DEMO_TOPIC_PREFIX = "aria/demo"


def mqtt_url() -> str:
    """The demo broker (`ARIA_MQTT_URL`, default a local Mosquitto)."""
    return os.environ.get("ARIA_MQTT_URL") or "mqtt://127.0.0.1:1883"


def demo_topic(cell_tag: str, signal_key: str) -> str:
    return f"{DEMO_TOPIC_PREFIX}/{cell_tag}/{signal_key}"


def demo_connector_seed() -> Connector:
    """The demo MQTT connector (off until `--via mqtt`): every signal of the onboarded cells on
    `aria/demo/<cell tag>/<signal key>`. Idempotent; adds tags for signals added since."""
    connector, _ = Connector.objects.get_or_create(
        name=DEMO_CONNECTOR,
        defaults={
            "kind": Connector.Kind.MQTT_JSON,
            "endpoint": mqtt_url(),
            "topic_filter": f"{DEMO_TOPIC_PREFIX}/#",
            "enabled": False,
        },
    )
    mapped = set(connector.tags.values_list("signal_id", flat=True))
    signals = SignalDefinition.objects.filter(cell__onboarding_complete=True).select_related("cell").order_by("pk")
    ConnectorTag.objects.bulk_create(
        [
            ConnectorTag(connector=connector, source=demo_topic(s.cell.tag, s.key), signal=s)
            for s in signals
            if s.pk not in mapped
        ],
        ignore_conflicts=True,
    )
    return connector


def demo_connector_enable(log: Callable[[str], None]) -> Connector:
    """`--via mqtt`: the demo connector on, pointed at ARIA_MQTT_URL."""

    with transaction.atomic():
        connector = demo_connector_seed()
        if connector.endpoint != mqtt_url():
            Connector.objects.filter(pk=connector.pk).update(endpoint=mqtt_url())
        if not connector.enabled:
            connector = connector_set_enabled(connector=connector, enabled=True)
    log(f"connectors: demo connector {connector.name!r} on, broker {mqtt_url()}")
    return connector


def _history(spec, signal_id: int, tag: str, rng: random.Random, now) -> list[tuple]:
    """A few hours of plausible values: the nominal value, a slow daily-ish swing and noise.
    P-02 vibration drifts up slightly (the bearing is starting to wear)."""
    steps = HISTORY_HOURS * 3600 // HISTORY_STEP_SECONDS
    rows = []
    for i in range(steps):
        t = now - timedelta(seconds=(steps - 1 - i) * HISTORY_STEP_SECONDS)  # the last one is now
        swing = 0.01 * spec.nominal * math.sin(2 * math.pi * i / (steps / 2))
        drift = 0.15 * i / steps if (tag, spec.key) == ("P-02", "vibration_mm_s") else 0.0
        value = spec.nominal - (0.15 if drift else 0.0) + drift + swing + rng.gauss(0, spec.noise)
        rows.append((signal_id, t, round(value, 4)))
    return rows


def seed(stdout) -> None:
    rng = random.Random(2)
    now = timezone.now()
    created_signals = samples = 0
    with transaction.atomic():
        site, _ = Site.objects.get_or_create(name=SITE)
        for cell_spec in CELLS:
            line, _ = Line.objects.get_or_create(site=site, name=cell_spec.line)
            cell, _ = Cell.objects.get_or_create(
                tag=cell_spec.tag,
                defaults={
                    "line": line,
                    "name": cell_spec.name,
                    "equipment_type": cell_spec.equipment_type,
                    "onboarding_complete": cell_spec.onboarded,
                },
            )
            for spec in cell_spec.signals:
                signal, created = SignalDefinition.objects.get_or_create(
                    cell=cell,
                    key=spec.key,
                    defaults={
                        "display_name": spec.display_name,
                        "unit": spec.unit,
                        "low_alert": spec.low_alert,
                        "alert": spec.alert,
                        "high_alert": spec.high_alert,
                        "trip": spec.trip,
                        "deadband": spec.deadband,
                        "on_delay_seconds": spec.on_delay_seconds,
                    },
                )
                created_signals += created
                if SignalSample.objects.filter(signal=signal).exists():
                    continue
                rows = _history(spec, signal.pk, cell.tag, rng, now)
                samples_ingest(samples=rows, now=now)
                samples += len(rows)
        demo_connector_seed()
    stdout.write(
        f"sentinel: plant {SITE!r} with {len(CELLS)} cells; {created_signals} new signals; {samples} history samples\n"
    )
