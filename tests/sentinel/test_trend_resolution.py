"""The trend selector reads raw samples up to 2 h, 1-minute rollups up to 3 days and 1-hour
rollups beyond; rolled buckets come from the rollup, dirty or unrolled ones from raw; the query
count does not grow with the range. Runs on SQLite and on PostgreSQL (DATABASE_URL)."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from sentinel import selectors
from sentinel.history.rollups import history_rollup
from sentinel.models import SignalSample
from tests.sentinel.factories import make_cell, make_signal
from tests.sentinel.history_helpers import NOW, ingest_at

pytestmark = pytest.mark.django_db


def _day_of_samples(signal, *, end, hours):
    """One sample a minute for `hours` hours ending at `end` (value = minute index % 10)."""
    start = end - timedelta(hours=hours)
    SignalSample.objects.bulk_create(
        SignalSample(signal=signal, time=start + timedelta(minutes=i), value=float(i % 10)) for i in range(hours * 60)
    )


@pytest.mark.parametrize(
    ("minutes", "resolution"),
    [(60, "raw"), (120, "raw"), (121, "1m"), (3 * 24 * 60, "1m"), (3 * 24 * 60 + 1, "1h"), (30 * 24 * 60, "1h")],
)
def test_the_selector_picks_the_resolution_from_the_range(minutes, resolution):
    signal = make_signal(make_cell(), "a")
    trend = selectors.trends([signal], minutes=minutes, buckets=1000, end=NOW)[0]
    assert trend["resolution"] == resolution
    assert len(trend["buckets"]) <= 1000


def test_rolled_buckets_are_read_from_the_rollup_and_match_the_raw_reading():
    signal = make_signal(make_cell(), "a", alert=8.5, trip=None)
    _day_of_samples(signal, end=NOW, hours=30)
    raw_trend = selectors.trends([signal], minutes=24 * 60, buckets=24, end=NOW)[0]  # nothing rolled: raw
    history_rollup(now=NOW, batch=100_000)
    rolled_trend = selectors.trends([signal], minutes=24 * 60, buckets=24, end=NOW)[0]
    assert rolled_trend["resolution"] == "1m"
    assert [(b["n"], b["min"], b["max"], round(b["avg"], 6)) for b in rolled_trend["buckets"]] == [
        (b["n"], b["min"], b["max"], round(b["avg"], 6)) for b in raw_trend["buckets"]
    ]
    assert rolled_trend["breach"]["samples"] == raw_trend["breach"]["samples"]  # rows of 9.0, bucket by bucket

    # The raw samples of rolled minutes are not read: with them gone, the chart is unchanged.
    SignalSample.objects.filter(signal=signal, time__lt=NOW - timedelta(minutes=1)).delete()
    again = selectors.trends([signal], minutes=24 * 60, buckets=24, end=NOW)[0]
    assert [b["n"] for b in again["buckets"]] == [b["n"] for b in rolled_trend["buckets"]]
    raw_hour = selectors.trends([signal], minutes=60, buckets=6, end=NOW)[0]
    assert sum(b["n"] for b in raw_hour["buckets"]) == 1  # raw resolution: only the sample kept


def test_a_minute_marked_dirty_is_read_raw_until_rolled_again():
    signal = make_signal(make_cell(), "a")
    _day_of_samples(signal, end=NOW, hours=4)
    history_rollup(now=NOW, batch=100_000)
    # A late sample far above the rest, in an already rolled minute.
    ingest_at(signal, [(30, 50.0)], base=NOW - timedelta(hours=3))
    trend = selectors.trends([signal], minutes=4 * 60, buckets=4, end=NOW)[0]
    assert trend["resolution"] == "1m" and trend["peak"] == 50.0
    assert sum(b["n"] for b in trend["buckets"]) == 4 * 60  # 239 rolled in the window + the late one


def test_hour_resolution_reads_the_hour_rollup_over_thirty_days():
    signal = make_signal(make_cell(), "a")
    _day_of_samples(signal, end=NOW, hours=24 * 5)
    history_rollup(now=NOW, batch=100_000)
    SignalSample.objects.filter(signal=signal, time__lt=NOW - timedelta(minutes=1)).delete()
    trend = selectors.trends([signal], minutes=30 * 24 * 60, buckets=1000, end=NOW)[0]
    assert trend["resolution"] == "1h" and trend["bucket_seconds"] == 3600
    assert len(trend["buckets"]) == 720
    assert sum(b["n"] for b in trend["buckets"]) == 24 * 5 * 60  # every minute rolled (raw deleted)


def test_the_query_count_does_not_grow_with_the_range_or_the_signals():
    cell = make_cell()
    signals = [make_signal(cell, f"s{i}") for i in range(3)]
    for signal in signals:
        _day_of_samples(signal, end=NOW, hours=6)
    history_rollup(now=NOW, batch=100_000)
    ingest_at(signals[0], [(0, 1.5)], base=NOW - timedelta(hours=5))  # one dirty minute
    counts = {}
    for minutes in (3 * 60, 24 * 60, 3 * 24 * 60, 7 * 24 * 60, 30 * 24 * 60):
        for chosen in (signals[:1], signals):
            with CaptureQueriesContext(connection) as queries:
                selectors.trends(chosen, minutes=minutes, buckets=100, end=NOW)
            counts[(minutes, len(chosen))] = len(queries)
    assert set(counts.values()) == {3}, counts  # dirty minutes; buckets and breaches, each raw ∪ rollup


def test_a_thirty_day_chart_through_the_api_reads_hourly_buckets_and_longer_ranges_are_refused(client, operator):
    signal = make_signal(make_cell(), "a")
    client.force_login(operator)
    body = client.get(f"/api/v1/signals/{signal.pk}/trends?minutes={30 * 24 * 60}&buckets=1000").json()
    assert (body["resolution"], body["bucket_seconds"], len(body["points"])) == ("1h", 3600, 720)
    response = client.get(f"/api/v1/signals/{signal.pk}/trends?minutes={31 * 24 * 60 + 1}")
    assert response.status_code == 422 and response.json()["field"] == "minutes"
