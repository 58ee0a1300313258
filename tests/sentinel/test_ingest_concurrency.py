"""PostgreSQL: batches that share instants, posted at once in opposite orders, store each instant
once and never deadlock (the samples go in (signal, time) order — by COPY, or after a duplicate by
INSERT … ON CONFLICT — and the latest values in signal order)."""

import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from sentinel.models import SignalLatest, SignalSample
from sentinel.services import sample_store, samples_ingest
from tests.sentinel.factories import make_cell, make_signal

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


def test_overlapping_batches_in_opposite_orders_store_each_instant_once(monkeypatch):
    cell = make_cell("P-09")
    signals = [make_signal(cell, f"s{k}", alert=None, trip=None) for k in range(3)]
    now = timezone.now()
    rows = [(s.pk, now - timedelta(seconds=300 - i), 2.0) for i in range(300) for s in signals]
    batches = [rows, list(reversed(rows))]
    barrier = threading.Barrier(2)
    write = sample_store.samples_write

    def both_ready_before_writing(cursor, samples):  # both transactions open, nothing written yet
        barrier.wait(timeout=20)
        return write(cursor, samples)

    monkeypatch.setattr(sample_store, "samples_write", both_ready_before_writing)
    results, errors = [], []

    def ingest(batch):
        try:
            results.append(samples_ingest(samples=batch))
        except Exception as exc:  # surfaced below
            errors.append(exc)
        finally:
            connection.close()

    for _ in range(3):
        results.clear()
        threads = [threading.Thread(target=ingest, args=(b,)) for b in batches]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
        assert not errors, errors
        assert sum(len(rows) - r.duplicates for r in results) in (0, len(rows))
    assert SignalSample.objects.count() == len(rows)
    newest = max(t for _, t, _ in rows)
    assert set(SignalLatest.objects.values_list("time", flat=True)) == {newest}
