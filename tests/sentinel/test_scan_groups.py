"""A scan split into cell groups (ARIA_SCAN_GROUPS): the groups partition the plant by cell,
scanning every group finds what one full scan finds, and workers scanning at once never raise an
alarm twice (PostgreSQL: real row locks, threads and a real Celery worker)."""

import threading

import pytest
from django.db import connection
from django.test import override_settings

from sentinel.models import Alarm, AlarmEvent, SignalDefinition, SignalLatest
from sentinel.services import evaluation, sentinel_scan
from sentinel.services.scan import CellGroup, scan_group_count
from sentinel.tasks import scan_task
from tests.conftest import wait_until
from tests.sentinel.factories import make_cell, make_signal, set_latest
from workorders.models import WorkOrder


def _plant(cells=6, breaching_per_cell=2, normal_per_cell=2):
    """Cells with breaching and normal signals; returns the breaching signal ids."""
    hot = []
    for c in range(cells):
        cell = make_cell(f"G-{c:02d}")
        for k in range(breaching_per_cell + normal_per_cell):
            signal = make_signal(cell, f"s{k}")
            set_latest(signal, 5.3 if k < breaching_per_cell else 2.0)
            if k < breaching_per_cell:
                hot.append(signal.pk)
    make_signal(make_cell("G-OFF", onboarded=False), "s0")  # not onboarded: in no group
    return sorted(hot)


@pytest.mark.django_db
def test_groups_partition_the_scanned_signals_by_cell():
    _plant()
    groups = [CellGroup(i, 4) for i in range(4)]
    ids = [list(SignalLatest.objects.filter(g.scope()).values_list("signal_id", flat=True)) for g in groups]
    flat = [s for part in ids for s in part]
    assert len(flat) == len(set(flat))  # disjoint
    assert sorted(flat) == sorted(SignalLatest.objects.values_list("signal_id", flat=True))
    cells_of = dict(SignalDefinition.objects.values_list("pk", "cell_id"))
    for group, part in zip(groups, ids, strict=True):
        assert {cells_of[s] % 4 for s in part} <= {group.index}  # a cell's signals stay together


@pytest.mark.parametrize(("index", "count"), [(0, 0), (2, 2), (-1, 3)])
def test_a_group_outside_the_count_is_refused(index, count):
    with pytest.raises(ValueError, match="no cell group"):
        CellGroup(index, count)


@pytest.mark.django_db
def test_the_group_count_comes_from_the_setting():
    assert scan_group_count() == 1
    with override_settings(ARIA_SCAN_GROUPS=3):
        assert scan_group_count() == 3
    with override_settings(ARIA_SCAN_GROUPS=0):
        assert scan_group_count() == 1


@pytest.mark.django_db
def test_scanning_every_group_raises_what_a_full_scan_raises_once():
    hot = _plant()
    raised = []
    for index in range(3):
        raised += sentinel_scan(group=CellGroup(index, 3)).evaluation.raised
    assert sorted(Alarm.objects.values_list("signal_id", flat=True)) == hot
    assert sorted(raised) == sorted(Alarm.objects.values_list("pk", flat=True))
    again = [sentinel_scan(group=CellGroup(i, 3)).evaluation.raised for i in range(3)]
    assert again == [[], [], []] and sentinel_scan().evaluation.raised == []


@pytest.mark.django_db
def test_the_beat_task_fans_out_one_task_per_group():
    hot = _plant()
    with override_settings(ARIA_SCAN_GROUPS=4):
        summary = scan_task()  # tests run Celery eagerly: the group tasks run here
    assert summary["groups"] == 4
    assert sorted(Alarm.objects.values_list("signal_id", flat=True)) == hot


def _in_threads(targets):
    errors = []

    def run(target):
        try:
            target()
        except Exception as exc:  # surfaced below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(t,)) for t in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not errors, errors


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
def test_two_workers_scanning_the_same_group_at_once_raise_each_alarm_once(monkeypatch):
    # Given breaching signals, and two workers that both read "no open alarm" before either
    # writes (an overrunning round and the next one on the same group).
    hot = _plant(cells=4)
    barrier = threading.Barrier(2)
    original = evaluation._decide_and_apply

    def both_read_before_writing(*args, **kwargs):
        barrier.wait(timeout=20)
        return original(*args, **kwargs)

    monkeypatch.setattr(evaluation, "_decide_and_apply", both_read_before_writing)
    group = CellGroup(0, 1)
    _in_threads([lambda: sentinel_scan(group=group), lambda: sentinel_scan(group=group)])
    # Then one alarm per breaching signal, one raise event each, one work order per cell.
    assert sorted(Alarm.objects.values_list("signal_id", flat=True)) == hot
    assert AlarmEvent.objects.filter(from_state="").count() == len(hot)
    assert WorkOrder.objects.count() == 4


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
def test_rounds_fanned_out_to_a_real_worker_raise_each_alarm_once(celery_worker):
    from aria_project.celery import app as celery_app

    hot = _plant(cells=8)
    for _ in range(3):  # three overlapping rounds of 4 groups, on a worker running 4 at a time
        for index in range(4):
            celery_app.send_task("sentinel.scan_group", args=[index, 4], queue=celery_worker.queue)

    def all_raised():
        return Alarm.objects.count() >= len(hot)

    assert wait_until(all_raised, timeout=60), celery_worker.log_tail()
    wait_until(lambda: False, timeout=2)  # let any later round finish
    assert sorted(Alarm.objects.values_list("signal_id", flat=True)) == hot
    assert WorkOrder.objects.count() == 8
