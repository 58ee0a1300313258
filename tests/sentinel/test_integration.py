"""PostgreSQL + Redis: real row locks and the partial unique index under concurrency."""

import threading

import pytest

from sentinel.models import Alarm, AlarmEvent
from sentinel.services import evaluation, samples_ingest, sentinel_scan
from sentinel.signals import alarm_raised
from tests.sentinel.factories import make_cell, make_signal, set_latest
from tests.threads import in_threads

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


def test_two_concurrent_scans_create_exactly_one_alarm(monkeypatch):
    # Given a breaching signal and two scans that both read "no open alarm" before either writes.
    signal = make_signal(make_cell("P-02"), "vibration_mm_s")
    set_latest(signal, 5.3)
    barrier = threading.Barrier(2)
    original = evaluation._decide_and_apply

    def both_read_before_writing(*args, **kwargs):
        barrier.wait(timeout=10)
        return original(*args, **kwargs)

    monkeypatch.setattr(evaluation, "_decide_and_apply", both_read_before_writing)
    sent = []
    alarm_raised.connect(lambda sender, alarm, **kw: sent.append(alarm.pk), dispatch_uid="it-raise", weak=False)
    results = []
    try:
        in_threads(*[lambda: results.append(sentinel_scan())] * 2, timeout=30)
    finally:
        alarm_raised.disconnect(dispatch_uid="it-raise")
    # Then exactly one alarm, one raise event, one announcement.
    alarm = Alarm.objects.get()
    assert sorted(pk for r in results for pk in r.evaluation.raised) == [alarm.pk]
    assert sent == [alarm.pk]
    assert AlarmEvent.objects.filter(alarm=alarm).count() == 1


def test_concurrent_ingest_batches_keep_one_alarm_and_the_newest_latest_value():
    from datetime import timedelta

    from django.utils import timezone

    from sentinel.models import SignalLatest, SignalSample

    signal = make_signal(make_cell("P-03"), "vibration_mm_s")
    now = timezone.now()
    batches = [[(signal.pk, now - timedelta(seconds=60 - i - b * 30), 5.0 + b) for i in range(30)] for b in range(2)]
    it = iter(batches)
    lock = threading.Lock()

    def ingest():
        with lock:
            batch = next(it)
        samples_ingest(samples=batch)

    in_threads(ingest, ingest, timeout=30)
    assert SignalSample.objects.count() == 60  # written with COPY on PostgreSQL
    assert SignalLatest.objects.get(signal=signal).value == 6.0
    assert Alarm.objects.filter(signal=signal).count() == 1
