"""Retention by age (per signal kind) and the rollups' own retention — on SQLite by delete, on
PostgreSQL by partition drop plus a bounded delete for shorter-lived kinds."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test import override_settings
from django.utils import timezone

from sentinel.history.retention import history_upkeep, retention_days
from sentinel.models import HistoryDirtyMinute, SampleRollupHour, SampleRollupMinute, SignalSample
from tests.sentinel.factories import make_cell, make_signal

pytestmark = pytest.mark.django_db

KINDS = {"vibration_*": 90, "flow_*": 7}


@override_settings(ARIA_HISTORY_RETENTION_DAYS=30, ARIA_HISTORY_RETENTION_DAYS_BY_KIND=KINDS)
def test_the_first_matching_kind_pattern_sets_the_retention():
    assert (retention_days("vibration_mm_s"), retention_days("flow_m3_h"), retention_days("temp_c")) == (90, 7, 30)


@override_settings(ARIA_HISTORY_RETENTION_DAYS=30, ARIA_HISTORY_RETENTION_DAYS_BY_KIND=KINDS)
def test_raw_samples_older_than_their_kinds_retention_are_removed():
    now = timezone.now()
    cell = make_cell()
    vibration, flow, temperature = (make_signal(cell, k) for k in ("vibration_mm_s", "flow_m3_h", "temp_c"))
    ages = {vibration: (100, 40, 1), flow: (10, 5), temperature: (40, 10)}
    SignalSample.objects.bulk_create(
        SignalSample(signal=s, time=now - timedelta(days=d), value=float(d)) for s, days in ages.items() for d in days
    )

    history_upkeep(now=now)

    kept = {s.key: sorted(SignalSample.objects.filter(signal=s).values_list("value", flat=True)) for s in ages}
    assert kept == {"vibration_mm_s": [1.0, 40.0], "flow_m3_h": [5.0], "temp_c": [10.0]}
    assert not HistoryDirtyMinute.objects.filter(minute__lt=now - timedelta(days=90)).exists()


@override_settings(ARIA_HISTORY_MINUTE_ROLLUP_RETENTION_DAYS=90, ARIA_HISTORY_HOUR_ROLLUP_RETENTION_DAYS=0)
def test_rollups_have_their_own_retention_and_zero_keeps_forever():
    now = timezone.now()
    signal = make_signal(make_cell(), "temp_c")
    for model in (SampleRollupMinute, SampleRollupHour):
        model.objects.bulk_create(
            model(
                signal=signal,
                bucket=(now - timedelta(days=d)).replace(minute=0, second=0, microsecond=0),
                min=1,
                max=1,
                avg=1,
                count=1,
                last=1,
            )
            for d in (200, 10)
        )
    history_upkeep(now=now)
    assert SampleRollupMinute.objects.count() == 1  # the 200-day-old minute is gone
    assert SampleRollupHour.objects.count() == 2  # hours kept forever


@pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite: Django table rebuilds drop triggers")
def test_the_upkeep_puts_back_a_dirty_minute_trigger_a_table_rebuild_dropped():
    signal = make_signal(make_cell(), "temp_c")
    with connection.cursor() as cursor:
        cursor.execute("DROP TRIGGER sentinel_samples_dirty_insert")
    history_upkeep()
    SignalSample.objects.create(signal=signal, time=timezone.now(), value=1.0)
    assert HistoryDirtyMinute.objects.count() == 1
