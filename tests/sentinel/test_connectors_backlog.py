"""A batch the database refuses (an error, not a bad sample) is kept and retried with backoff,
in order, without duplicates; the backlog is bounded and an overflow drops the oldest samples
with a visible, counted error. The database failure is real: the samples table is renamed away
for the outage (inside the test's transaction) and back."""

from __future__ import annotations

import json
import time
from datetime import timedelta

import pytest
from django.db import connection
from django.test import override_settings
from django.utils import timezone

from sentinel.connectors.backlog import Backlog
from sentinel.connectors.supervisor import ConnectorSupervisor
from sentinel.models import Connector, ConnectorTag, SignalSample
from tests.sentinel.connector_helpers import Publisher, pump, require_broker, status_of, unique

pytestmark = pytest.mark.django_db
TABLE = SignalSample._meta.db_table


@pytest.fixture
def publisher():
    require_broker()
    publisher = Publisher()
    yield publisher
    publisher.close()


@pytest.fixture
def supervisor():
    supervisor = ConnectorSupervisor(log=lambda message: None)
    yield supervisor
    supervisor.stop_all()


def _outage(down: bool) -> None:
    with connection.cursor() as cursor:
        if down:
            cursor.execute(f"ALTER TABLE {TABLE} RENAME TO {TABLE}_away")
        else:
            cursor.execute(f"ALTER TABLE {TABLE}_away RENAME TO {TABLE}")


def _connector(supervisor: ConnectorSupervisor, prefix: str, signal) -> Connector:
    connector = Connector.objects.create(
        name=prefix, kind=Connector.Kind.MQTT_JSON, endpoint="mqtt://127.0.0.1:1883", topic_filter=f"{prefix}/#"
    )
    ConnectorTag.objects.create(connector=connector, source=f"{prefix}/vib", signal=signal)
    assert pump(supervisor, lambda: status_of(connector) == Connector.Status.CONNECTED), connector.last_error
    time.sleep(0.3)  # the subscription's SUBACK
    return connector


def _publish(publisher, prefix: str, values: list[float]) -> None:
    now = timezone.now()  # full resolution: each call's samples are newer than the last call's
    for k, value in enumerate(values):
        at = now - timedelta(milliseconds=len(values) - k)
        publisher.publish(f"{prefix}/vib", json.dumps({"value": value, "time": at.isoformat()}))


def _stored() -> list[float]:
    return list(SignalSample.objects.order_by("time").values_list("value", flat=True))


def test_a_batch_lost_to_a_database_error_is_retried_in_order_once_it_is_back(publisher, supervisor, vibration):
    prefix = unique("aria-backlog")
    connector = _connector(supervisor, prefix, vibration)
    running = supervisor.running[connector.pk]
    _outage(True)
    _publish(publisher, prefix, [2.0, 2.1])
    assert pump(supervisor, lambda: running.backlog.size == 2 and running.backlog.failures >= 1)
    assert pump(supervisor, lambda: "kept, retry in" in (Connector.objects.get(pk=connector.pk).last_error or ""))
    _publish(publisher, prefix, [2.2])  # arrives during the outage: queued behind the failed batch
    assert pump(supervisor, lambda: running.backlog.size == 3)
    _outage(False)
    assert pump(supervisor, lambda: running.backlog.size == 0, timeout=40)
    assert _stored() == pytest.approx([2.0, 2.1, 2.2])  # all of them, once, in order
    assert pump(supervisor, lambda: Connector.objects.get(pk=connector.pk).samples_total == 3)
    assert Connector.objects.get(pk=connector.pk).error_count >= 1


@override_settings(ARIA_CONNECTOR_BACKLOG=3)
def test_a_full_backlog_drops_the_oldest_samples_with_a_counted_visible_error(publisher, supervisor, vibration):
    prefix = unique("aria-backlog")
    connector = _connector(supervisor, prefix, vibration)
    _outage(True)
    _publish(publisher, prefix, [1.0, 1.1, 1.2, 1.3, 1.4])
    assert pump(supervisor, lambda: supervisor.running[connector.pk].backlog.dropped_total == 2)
    connector.refresh_from_db()
    assert "dropped the" in connector.last_error or "kept, retry in" in connector.last_error
    _outage(False)
    assert pump(supervisor, lambda: supervisor.running[connector.pk].backlog.size == 0, timeout=40)
    assert _stored() == pytest.approx([1.2, 1.3, 1.4])  # the newest three
    connector.refresh_from_db()
    assert connector.error_count >= 2  # the failed attempts and the drop are both counted


def test_the_backlog_keeps_the_newest_samples_and_backs_off_exponentially():
    backlog = Backlog(limit=5)
    t0 = timezone.now()
    samples = [(1, t0 + timedelta(seconds=k), float(k)) for k in range(7)]
    assert backlog.add(samples[:4], batch_size=3) == 0
    assert backlog.add(samples[4:], batch_size=3) == 2  # 7 > 5: the two oldest go
    assert [s[2] for batch in backlog.batches for s in batch] == [2.0, 3.0, 4.0, 5.0, 6.0]
    assert [backlog.failed(100.0) for _ in range(8)] == [0.5, 1, 2, 4, 8, 16, 30, 30]
    assert not backlog.due(100.0 + 29) and backlog.due(100.0 + 30)
    backlog.done()
    assert backlog.failures == 0 and backlog.size == 4
