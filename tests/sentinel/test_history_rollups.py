"""Rollups (1 min / 1 h) kept from the dirty-minute log, late samples included. Runs on SQLite by
default and on PostgreSQL (partitioned tables) with DATABASE_URL."""

from datetime import timedelta

import pytest

from sentinel.history.rollups import history_rollup
from sentinel.models import HistoryDirtyMinute, SampleRollupHour, SampleRollupMinute
from tests.sentinel.factories import make_cell, make_signal
from tests.sentinel.history_helpers import NOW, T0, ingest_at

pytestmark = pytest.mark.django_db


def _rollup(model, signal, bucket):
    row = model.objects.get(signal=signal, bucket=bucket)
    return (row.min, row.max, round(row.avg, 6), row.count, row.last)


def test_minute_and_hour_rollups_hold_min_max_avg_count_last():
    # Given two signals sampled over two minutes of one hour, ingested through the service.
    a, b = make_signal(make_cell(), "a"), make_signal(make_cell(), "b")
    ingest_at(a, [(0, 1.0), (20, 5.0), (40, 3.0), (60, 2.0), (90, 4.0)])
    ingest_at(b, [(10, 10.0), (70, 20.0)])
    assert HistoryDirtyMinute.objects.exists()  # marked by the trigger, in the ingest transaction

    # When the rollup runs.
    result = history_rollup(now=NOW)

    # Then each minute and the hour hold the raw aggregates, and no mark is left.
    assert result.minutes == 2 and not HistoryDirtyMinute.objects.exists()
    assert _rollup(SampleRollupMinute, a, T0) == (1.0, 5.0, 3.0, 3, 3.0)
    assert _rollup(SampleRollupMinute, a, T0 + timedelta(minutes=1)) == (2.0, 4.0, 3.0, 2, 4.0)
    assert _rollup(SampleRollupHour, a, T0) == (1.0, 5.0, 3.0, 5, 4.0)
    assert _rollup(SampleRollupHour, b, T0) == (10.0, 20.0, 15.0, 2, 20.0)


def test_a_late_sample_rolls_its_minute_and_hour_again():
    signal = make_signal(make_cell(), "a")
    ingest_at(signal, [(0, 1.0), (30, 3.0), (600, 7.0)])
    history_rollup(now=NOW)
    assert _rollup(SampleRollupHour, signal, T0) == (1.0, 7.0, round(11 / 3, 6), 3, 7.0)

    # When a sample for the first minute arrives late (after newer ones), out of order.
    ingest_at(signal, [(15, 9.0)])
    assert list(HistoryDirtyMinute.objects.values_list("minute", flat=True)) == [T0]
    history_rollup(now=NOW)

    # Then that minute and its hour are re-rolled; `last` stays the newest sample's value.
    assert _rollup(SampleRollupMinute, signal, T0) == (1.0, 9.0, round(13 / 3, 6), 3, 3.0)
    assert _rollup(SampleRollupHour, signal, T0) == (1.0, 9.0, 5.0, 4, 7.0)
    assert _rollup(SampleRollupMinute, signal, T0 + timedelta(minutes=10)) == (7.0, 7.0, 7.0, 1, 7.0)


def test_the_current_minute_is_not_rolled_until_it_is_complete():
    signal = make_signal(make_cell(), "a")
    ingest_at(signal, [(0, 1.0)], base=NOW - timedelta(seconds=20))  # 12:00:10, minute not over
    assert history_rollup(now=NOW).minutes == 0
    assert not SampleRollupMinute.objects.exists() and HistoryDirtyMinute.objects.count() == 1
    assert history_rollup(now=NOW + timedelta(minutes=1)).minutes == 1
    assert SampleRollupMinute.objects.get(signal=signal).count == 1


def test_a_second_run_with_nothing_new_changes_nothing():
    signal = make_signal(make_cell(), "a")
    ingest_at(signal, [(0, 1.0), (61, 2.0)])
    history_rollup(now=NOW)
    before = list(SampleRollupMinute.objects.order_by("bucket").values_list("bucket", "count"))
    assert history_rollup(now=NOW).minutes == 0
    assert list(SampleRollupMinute.objects.order_by("bucket").values_list("bucket", "count")) == before
