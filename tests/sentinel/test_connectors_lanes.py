"""Ingest lanes (ARIA_CONNECTOR_INGEST_LANES): a connector's samples split by signal over several
database connections. A signal always travels in one lane, in arrival order; every sample is
stored once; alarms are raised from the lanes as from one; the lanes' connections are closed
when the connector stops."""

from __future__ import annotations

import json
import threading
import time
from datetime import timedelta

import pytest
from django.db import connection
from django.test import override_settings
from django.utils import timezone

from sentinel.connectors import supervisor as supervisor_module
from sentinel.connectors.lanes import Lanes
from sentinel.connectors.supervisor import ConnectorSupervisor
from sentinel.models import Alarm, Connector, ConnectorTag, SignalSample
from sentinel.services import samples_ingest
from tests.sentinel.connector_helpers import Publisher, pump, require_broker, status_of, unique
from tests.sentinel.factories import make_cell, make_signal


@override_settings(ARIA_CONNECTOR_BACKLOG=1_000)
def test_a_signal_always_travels_in_one_lane_in_arrival_order():
    now = timezone.now()
    samples = [(signal_id, now + timedelta(seconds=tick), float(tick)) for tick in range(5) for signal_id in range(7)]
    lanes = Lanes(3)
    try:
        assert lanes.add(samples, batch_size=4) == 0
        per_lane = [[s for batch in backlog.batches for s in batch] for backlog in lanes.backlogs]
        assert sorted(s for lane in per_lane for s in lane) == sorted(samples)  # each sample once
        for index, lane in enumerate(per_lane):
            assert {s[0] % 3 for s in lane} == {index}  # a signal's samples all in one lane
            for signal_id in {s[0] for s in lane}:  # and in the order they arrived
                assert [s for s in lane if s[0] == signal_id] == [s for s in samples if s[0] == signal_id]
        assert (lanes.size, lanes.limit) == (35, 999)  # the bound is shared out, not multiplied
    finally:
        lanes.close()


def _checked_out() -> int | None:
    """Connections taken from psycopg's pool and not given back (None without a pool)."""
    pool = connection.pool
    if pool is None:
        return None
    stats = pool.get_stats()
    return stats["pool_size"] - stats["pool_available"]


def _alive(pids: set[int]) -> set[int]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pid FROM pg_stat_activity WHERE pid = ANY(%s)", [list(pids)])
        return {row[0] for row in cursor.fetchall()}


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
@override_settings(ARIA_CONNECTOR_INGEST_LANES=2)
def test_two_lanes_store_every_sample_once_raise_alarms_and_close_their_connections(monkeypatch):
    if connection.vendor != "postgresql":
        pytest.skip("lanes are PostgreSQL's (SQLite has one writer)")
    require_broker()
    prefix = unique("aria-lanes")
    cell = make_cell("P-07")
    signals = [make_signal(cell, f"s{k}", alert=4.5, trip=7.1) for k in range(12)]
    out_before = _checked_out()  # this test's connection, and any an earlier test's thread still holds
    connector = Connector.objects.create(
        name=prefix, kind=Connector.Kind.MQTT_JSON, endpoint="mqtt://127.0.0.1:1883", topic_filter=f"{prefix}/#"
    )
    ConnectorTag.objects.bulk_create(
        ConnectorTag(connector=connector, source=f"{prefix}/{s.key}", signal=s) for s in signals
    )
    stored_by: set[tuple[str, int]] = set()  # (lane thread, database session) of each stored batch

    def ingest_and_note_the_session(**kwargs):
        result = samples_ingest(**kwargs)
        lane = threading.current_thread().name.rsplit("_", 1)[0]  # ThreadPoolExecutor names it <prefix>_<n>
        stored_by.add((lane, connection.connection.info.backend_pid))
        return result

    monkeypatch.setattr(supervisor_module, "samples_ingest", ingest_and_note_the_session)
    supervisor = ConnectorSupervisor(log=lambda message: None)
    publisher = Publisher()
    try:
        assert pump(supervisor, lambda: status_of(connector) == Connector.Status.CONNECTED), connector.last_error
        pump(supervisor, lambda: False, timeout=0.3)  # the subscription's SUBACK
        start = timezone.now() - timedelta(seconds=10)
        for tick in range(3):
            for signal in signals:  # signal s3 breaches its trip at the last tick
                value = 9.0 if (signal.key == "s3" and tick == 2) else 2.0 + tick / 10
                at = (start + timedelta(seconds=tick)).isoformat()
                publisher.publish(f"{prefix}/{signal.key}", json.dumps({"value": value, "time": at}))
        expected = 3 * len(signals)
        assert pump(supervisor, lambda: SignalSample.objects.count() == expected, timeout=20)
        # Each lane stores in its own thread over its own connection. With psycopg's pool a lane gives
        # its connection back between rounds and may get another one next round (CI saw three
        # sessions for two lanes), so the sessions are at least two, not exactly two.
        assert {lane for lane, _ in stored_by} == {"aria-ingest-lane-0", "aria-ingest-lane-1"}
        assert len({session for _, session in stored_by}) >= 2
        assert SignalSample.objects.values("signal_id", "time").distinct().count() == expected
        alarm = Alarm.objects.get()
        assert (alarm.signal.key, alarm.value) == ("s3", 9.0)
        connector.refresh_from_db()
        assert (connector.samples_total, connector.error_count) == (expected, 0)
    finally:
        publisher.close()
        supervisor.stop_all()
    assert not [t for t in threading.enumerate() if t.name.startswith("aria-ingest-lane")]  # threads gone
    pool = connection.pool  # psycopg's pool (settings): a closed connection goes back to it
    if pool is None:
        deadline = time.monotonic() + 10  # a backend leaves pg_stat_activity just after its client hangs up
        while _alive(stored_by) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(stored_by)
    else:  # the lanes gave theirs back: no more are out than before they started
        assert _checked_out() <= out_before
