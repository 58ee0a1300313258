"""Sentinel's metrics (core.metrics): samples ingested and their lag, scan duration, open alarms.

Instruments count in the process that does the work; the alarm counts are read from the
database at scrape time (one grouped query over the open states, whatever the alarm history).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime

from django.db.models import Count
from django.utils import timezone
from prometheus_client.metrics_core import Metric

from core.metrics import counter, counts_family, histogram, register_collector

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
    from sentinel.choices import OPEN_ALARM_STATES
    from sentinel.models import Alarm

    rows = Alarm.objects.filter(state__in=OPEN_ALARM_STATES).values_list("state").annotate(n=Count("id")).order_by()
    yield counts_family(
        "aria_alarms", "Open alarms by state.", "state", dict(rows), [str(s) for s in OPEN_ALARM_STATES]
    )


def register() -> None:
    """From SentinelConfig.ready(): the scrape-time collectors."""
    register_collector("sentinel.alarms", open_alarms_collect)
