"""Scan groups under change and concurrency: a signal moved to another cell, a group count changed
between (or during) rounds, and workers scanning overlapping groups at once never raise an alarm
twice nor leave a signal unscanned (PostgreSQL: real row locks, threads and a real Celery worker)."""

import threading

import pytest

from sentinel.models import SCAN_BUCKET_SPREAD, SCAN_BUCKETS, Alarm, AlarmEvent, SignalDefinition, SignalLatest
from sentinel.services import evaluation, sentinel_scan
from sentinel.services.scan import CellGroup
from tests.conftest import wait_until
from tests.sentinel.factories import make_cell, make_signal, set_latest
from tests.sentinel.test_scan_groups import group_of, plant
from tests.threads import in_threads
from workorders.models import WorkOrder


def _round(count: int) -> list[int]:
    """One round of `count` groups; the alarms it raised."""
    return [pk for i in range(count) for pk in sentinel_scan(group=CellGroup(i, count)).evaluation.raised]


@pytest.mark.django_db
def test_a_signal_moved_to_a_cell_of_another_group_is_scanned_by_its_new_group_only():
    # Given a breaching signal on a cell of group 0 of 2, its row stamped by a scan (on-delay keeps
    # it pending), and a cell of group 1.
    first = make_cell("M-A")
    signal = make_signal(first, "pressure", on_delay_seconds=3600)
    set_latest(signal, 5.3)
    old = CellGroup(group_of(signal.pk, 2), 2)
    second = next(c for c in (make_cell(f"M-{k}") for k in range(8)) if bucket_group(c, 2) != old.index)
    new = CellGroup(bucket_group(second, 2), 2)
    assert sentinel_scan(group=old).evaluation.pending == 1
    # When an engineer moves the signal to the other cell (a plain save, as the admin does) and
    # clears its on-delay.
    signal.cell, signal.on_delay_seconds = second, 0
    signal.save()
    # Then its row follows at once: the old group no longer reads it, the new one raises its alarm,
    # and a whole round after that raises nothing more.
    assert SignalLatest.objects.get(signal=signal).scan_bucket == SignalDefinition.objects.get(pk=signal.pk).scan_bucket
    assert sentinel_scan(group=old).evaluation.examined == 0
    [alarm_id] = sentinel_scan(group=new).evaluation.raised
    assert Alarm.objects.get(pk=alarm_id).signal_id == signal.pk
    assert _round(2) == [] and Alarm.objects.count() == 1


@pytest.mark.django_db
def test_a_group_count_changed_between_rounds_skips_no_signal_and_raises_none_twice():
    # Given breaching signals still in their on-delay: every scan that reads them counts them pending.
    plant(cells=7)
    SignalDefinition.objects.update(on_delay_seconds=3600)
    total = SignalLatest.objects.filter(signal__cell__onboarding_complete=True, value__gt=5).count()
    # When a round of 2 is half done (group 0 ran), the count becomes 3 and a full round of 3 runs,
    # then the old round's group 1 runs late.
    pending = {"old-0": sentinel_scan(group=CellGroup(0, 2)).evaluation.pending}
    pending["new"] = sum(sentinel_scan(group=CellGroup(i, 3)).evaluation.pending for i in range(3))
    pending["old-1"] = sentinel_scan(group=CellGroup(1, 2)).evaluation.pending
    # Then the new round read every signal once, and the old round's two halves together did too.
    assert pending["new"] == total
    assert pending["old-0"] + pending["old-1"] == total
    # And with the on-delay over, overlapping rounds of 2, 3 and 5 raise each alarm once.
    SignalDefinition.objects.update(on_delay_seconds=0)
    raised = _round(2) + _round(3) + _round(5)
    assert len(raised) == len(set(raised)) == total == Alarm.objects.count()


def _both_read_before_writing(monkeypatch):
    barrier = threading.Barrier(2)
    original = evaluation._decide_and_apply

    def wait_then_decide(*args, **kwargs):
        barrier.wait(timeout=20)
        return original(*args, **kwargs)

    monkeypatch.setattr(evaluation, "_decide_and_apply", wait_then_decide)


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(("first", "second"), [((0, 1), (0, 1)), ((0, 2), (0, 3)), ((1, 2), (2, 4))])
def test_two_workers_scanning_overlapping_groups_at_once_raise_each_alarm_once(monkeypatch, first, second):
    # Given breaching signals, and two workers that both read "no open alarm" before either writes:
    # an overrunning round and the next one on the same group, or on a group of a new count.
    hot = plant(cells=16)
    _both_read_before_writing(monkeypatch)
    in_threads(lambda: sentinel_scan(group=CellGroup(*first)), lambda: sentinel_scan(group=CellGroup(*second)))
    # Then one alarm per breaching signal both read, one raise event each, one work order per cell.
    both = [s for s in hot if group_in(s, first) and group_in(s, second)]
    assert both and set(both) <= set(Alarm.objects.values_list("signal_id", flat=True))
    assert Alarm.objects.count() == len(set(Alarm.objects.values_list("signal_id", flat=True)))
    assert AlarmEvent.objects.filter(from_state="").count() == Alarm.objects.count()
    assert WorkOrder.objects.count() == len(set(Alarm.objects.values_list("signal__cell_id", flat=True)))


def group_in(signal_id: int, group: tuple[int, int]) -> bool:
    index, count = group
    return group_of(signal_id, count) == index


def bucket_group(cell, count: int) -> int:
    """The group of `count` a cell falls in (the same bucket expression as the generated column)."""
    return cell.pk % SCAN_BUCKETS * SCAN_BUCKET_SPREAD % SCAN_BUCKETS * count // SCAN_BUCKETS


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
def test_rounds_fanned_out_to_a_real_worker_raise_each_alarm_once(celery_worker):
    from aria_project.celery import app as celery_app

    hot = plant(cells=8)
    for count in (4, 4, 3):  # three overlapping rounds, the last after a group-count change
        for index in range(count):
            celery_app.send_task("sentinel.scan_group", args=[index, count], queue=celery_worker.queue)

    def all_raised():
        return Alarm.objects.count() >= len(hot)

    assert wait_until(all_raised, timeout=60), celery_worker.log_tail()
    wait_until(lambda: False, timeout=2)  # let any later round finish
    assert sorted(Alarm.objects.values_list("signal_id", flat=True)) == hot
    assert WorkOrder.objects.count() == 8
