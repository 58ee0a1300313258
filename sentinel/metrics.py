"""Sentinel's metrics (core.metrics): samples ingested and their lag, scan duration, open alarms,
connector status.

Instruments count in the process that does the work; the alarm counts and the connectors' status
(written to their rows by the running connectors, whichever process runs them) are read from the
database at scrape time: one query each, whatever the alarm history or the number of connectors.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime

from django.db.models import Count
from django.utils import timezone
from prometheus_client.metrics_core import Metric

from core.metrics import (
    CounterMetricFamily,
    GaugeMetricFamily,
    counter,
    counts_family,
    histogram,
    register_collector,
)
from sentinel.choices import OPEN_ALARM_STATES
from sentinel.models import Alarm, Connector

INGEST_SAMPLES = counter("aria_ingest_samples", "Samples accepted by the ingest service (API, simulator, connectors).")
INGEST_LAG = histogram(
    "aria_ingest_lag_seconds",
    "Age of a batch's newest sample when it was stored (wall clock minus sample time).",
    buckets=(0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 86400),
)
SCAN_SECONDS = histogram(
    "aria_sentinel_scan_seconds",
    "Duration of one sentinel scan (shelf expiry, staleness, evaluation of every signal).",
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
)


def ingest_observe(samples: Sequence[tuple[int, datetime, float]]) -> None:
    """Count a stored batch of (signal_id, time, value) and observe its newest sample's age."""
    if not samples:
        return
    INGEST_SAMPLES.inc(len(samples))
    newest = max(sample[1] for sample in samples)
    INGEST_LAG.observe(max(0.0, (timezone.now() - newest).total_seconds()))


def open_alarms_collect() -> Iterable[Metric]:

    rows = Alarm.objects.filter(state__in=OPEN_ALARM_STATES).values_list("state").annotate(n=Count("id")).order_by()
    yield counts_family(
        "aria_alarms", "Open alarms by state.", "state", dict(rows), [str(s) for s in OPEN_ALARM_STATES]
    )


CONNECTOR_COUNTERS = (  # cumulative counts the running connector adds to its row
    ("messages_total", "aria_connector_messages", "Messages received by a connector."),
    ("samples_total", "aria_connector_samples", "Samples a connector handed to the ingest service."),
    ("error_count", "aria_connector_errors", "Errors a connector met (connection, payload, ingest)."),
    ("bad_quality_count", "aria_connector_bad_quality", "Values with bad/uncertain quality (flagged, signal stale)."),
    ("unknown_tag_count", "aria_connector_unknown_tags", "Values for a tag no signal is mapped to."),
)


def connectors_collect() -> Iterable[Metric]:

    columns = ("name", "kind", "enabled", "status", "messages_per_second", "last_message_at")
    rows = list(Connector.objects.values(*columns, *(c[0] for c in CONNECTOR_COUNTERS)).order_by("name"))
    labels = ["connector", "kind"]
    status = GaugeMetricFamily(
        "aria_connector_status", "1 for a connector's current status.", labels=[*labels, "status"]
    )
    enabled = GaugeMetricFamily("aria_connector_enabled", "1 when the connector is enabled.", labels=labels)
    rate = GaugeMetricFamily("aria_connector_messages_per_second", "Recent message rate.", labels=labels)
    age = GaugeMetricFamily(
        "aria_connector_last_message_age_seconds",
        "Time since the last message (absent before the first).",
        labels=labels,
    )
    counters = [CounterMetricFamily(name, doc, labels=labels) for _, name, doc in CONNECTOR_COUNTERS]
    now = timezone.now()
    for row in rows:
        key = [row["name"], row["kind"]]
        for value in Connector.Status.values:
            status.add_metric([*key, value], 1.0 if row["status"] == value else 0.0)
        enabled.add_metric(key, 1.0 if row["enabled"] else 0.0)
        rate.add_metric(key, float(row["messages_per_second"]))
        if row["last_message_at"] is not None:
            age.add_metric(key, max(0.0, (now - row["last_message_at"]).total_seconds()))
        for family, (column, _, _) in zip(counters, CONNECTOR_COUNTERS, strict=True):
            family.add_metric(key, float(row[column]))
    yield from (status, enabled, rate, age, *counters)


def register() -> None:
    """From SentinelConfig.ready(): the scrape-time collectors."""
    register_collector("sentinel.alarms", open_alarms_collect)
    register_collector("sentinel.connectors", connectors_collect)
