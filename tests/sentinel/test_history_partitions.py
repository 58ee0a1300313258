"""PostgreSQL: the history tables are range-partitioned by time; partitions are created ahead,
rows waiting in the DEFAULT partition move into a new range, and retention drops whole
partitions; concurrent rollups serialise."""

import threading
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.test import override_settings

from sentinel.history.partitions import partitions_ensure, partitions_list
from sentinel.history.retention import history_upkeep
from sentinel.history.rollups import history_rollup
from sentinel.history.schema import ROLLUP_HOUR, ROLLUP_MINUTE, SAMPLES
from sentinel.models import SampleRollupMinute, SignalSample
from tests.sentinel.factories import make_cell, make_signal

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

NOW = datetime(2027, 3, 10, 15, 30, tzinfo=UTC)


def _partition_of(signal, time) -> str:
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT tableoid::regclass::text FROM {SAMPLES} WHERE signal_id = %s AND time = %s", [signal.pk, time]
        )
        return cursor.fetchone()[0]


@override_settings(ARIA_HISTORY_PARTITIONS_AHEAD_DAYS=3, ARIA_HISTORY_PARTITION_HOURS=24)
def test_the_upkeep_creates_partitions_ahead_for_every_history_table():
    result = history_upkeep(now=NOW)

    days = [p.start for p in partitions_list(SAMPLES) if p.start >= datetime(2027, 3, 10, tzinfo=UTC)]
    assert days == [datetime(2027, 3, d, tzinfo=UTC) for d in (10, 11, 12, 13)]
    assert f"{SAMPLES}_p20270313" in result.created
    for table in (ROLLUP_MINUTE, ROLLUP_HOUR):
        assert partitions_list(table)[-1].end > NOW + timedelta(days=3)
    assert history_upkeep(now=NOW).created == []  # idempotent


@override_settings(ARIA_HISTORY_PARTITION_HOURS=6)
def test_a_sample_with_no_partition_waits_in_default_and_moves_into_a_new_one():
    signal = make_signal(make_cell(), "temp_c")
    old = NOW - timedelta(days=400)
    SignalSample.objects.create(signal=signal, time=old, value=1.0)
    assert _partition_of(signal, old) == f"{SAMPLES}_default"

    partitions_ensure(now=NOW, since=old)

    start = datetime(old.year, old.month, old.day, (old.hour // 6) * 6, tzinfo=UTC)
    assert _partition_of(signal, old) == f"{SAMPLES}_p{start:%Y%m%d_%H}"
    assert SignalSample.objects.get(signal=signal).value == 1.0


@override_settings(ARIA_HISTORY_RETENTION_DAYS=30, ARIA_HISTORY_RETENTION_DAYS_BY_KIND={})
def test_retention_drops_whole_partitions_older_than_the_retention():
    signal = make_signal(make_cell(), "temp_c")
    partitions_ensure(now=NOW, since=NOW - timedelta(days=40))
    times = [NOW - timedelta(days=35), NOW - timedelta(days=29), NOW - timedelta(hours=1)]
    SignalSample.objects.bulk_create(SignalSample(signal=signal, time=t, value=1.0) for t in times)
    old_partition = _partition_of(signal, times[0])

    result = history_upkeep(now=NOW)

    assert old_partition in result.dropped and result.deleted == 0
    assert all(p.end > NOW - timedelta(days=31) for p in partitions_list(SAMPLES))
    assert sorted(SignalSample.objects.values_list("time", flat=True)) == times[1:]


@pytest.mark.django_db(transaction=True)
def test_two_rollups_at_once_roll_each_minute_once():
    # Given marked minutes, and two rollups started together (the beat's and a manual one).
    signal = make_signal(make_cell(), "temp_c")
    start = datetime.now(UTC).replace(second=0, microsecond=0) - timedelta(minutes=30)
    SignalSample.objects.bulk_create(
        SignalSample(signal=signal, time=start + timedelta(seconds=20 * i), value=float(i)) for i in range(60)
    )
    results, errors = [], []
    barrier = threading.Barrier(2)

    def roll():
        try:
            barrier.wait(timeout=10)
            results.append(history_rollup().minutes)
        except Exception as exc:  # surfaced below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=roll) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)

    # Then one took the 20 minutes, the other found nothing left (no duplicate-key error).
    assert not errors and sorted(results) == [0, 20]
    assert SampleRollupMinute.objects.filter(signal=signal).count() == 20
    assert sum(SampleRollupMinute.objects.filter(signal=signal).values_list("count", flat=True)) == 60
