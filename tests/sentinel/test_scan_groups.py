"""A scan split into cell groups (ARIA_SCAN_GROUPS): the groups partition the plant by cell
through the indexed scan-bucket columns, a group's scan reads and touches only its own signals,
and scanning every group finds what one full scan finds."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test import override_settings
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from sentinel.models import SCAN_BUCKETS, Alarm, SignalDefinition, SignalLatest, StaleCondition
from sentinel.services import samples_ingest, sentinel_scan
from sentinel.services.scan import CellGroup, latest_buckets_stamp, scan_group_count
from sentinel.tasks import scan_task
from tests.sentinel.factories import make_cell, make_signal, set_latest


def plant(cells=6, breaching_per_cell=2, normal_per_cell=2, *, prefix="G"):
    """Cells with breaching and normal signals; returns the breaching signal ids."""
    hot = []
    for c in range(cells):
        cell = make_cell(f"{prefix}-{c:02d}")
        for k in range(breaching_per_cell + normal_per_cell):
            signal = make_signal(cell, f"s{k}")
            set_latest(signal, 5.3 if k < breaching_per_cell else 2.0)
            if k < breaching_per_cell:
                hot.append(signal.pk)
    make_signal(make_cell(f"{prefix}-OFF", onboarded=False), "s0")  # not onboarded: scanned by no group
    return sorted(hot)


def group_of(signal_id: int, count: int) -> int:
    """The group of `count` that scans a signal: its bucket's range."""
    return SignalDefinition.objects.get(pk=signal_id).scan_bucket * count // SCAN_BUCKETS


def cell_group(cell, count: int) -> CellGroup:
    return CellGroup(group_of(cell.signals.first().pk, count), count)


def _group_rows(group: CellGroup) -> list[int]:
    return list(SignalLatest.objects.filter(group.scope()).values_list("signal_id", flat=True))


@pytest.mark.parametrize("count", [1, 2, 3, 7, SCAN_BUCKETS])
def test_the_groups_of_any_count_partition_the_buckets(count):
    buckets = [b for index in range(count) for b in CellGroup(index, count).buckets()]
    assert sorted(buckets) == list(range(SCAN_BUCKETS))  # every bucket once: none skipped, none twice


@pytest.mark.django_db
def test_groups_partition_the_scanned_signals_by_cell():
    plant()
    groups = [CellGroup(i, 4) for i in range(4)]
    for group in groups:
        latest_buckets_stamp(group=group)
    ids = [_group_rows(g) for g in groups]
    flat = [s for part in ids for s in part]
    assert len(flat) == len(set(flat))  # disjoint
    assert sorted(flat) == sorted(SignalLatest.objects.values_list("signal_id", flat=True))
    cells_of = dict(SignalDefinition.objects.values_list("pk", "cell_id"))
    for group, part in zip(groups, ids, strict=True):
        assert {group_of(s, 4) for s in part} <= {group.index}
    for cell in {cells_of[s] for s in flat}:  # a cell's signals stay together
        assert len({i for i, part in enumerate(ids) for s in part if cells_of[s] == cell}) == 1
    assert all(ids)  # consecutive cells spread over the groups, none left empty


@pytest.mark.parametrize(("index", "count"), [(0, 0), (2, 2), (-1, 3), (0, SCAN_BUCKETS + 1)])
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
    with override_settings(ARIA_SCAN_GROUPS=SCAN_BUCKETS * 2):
        assert scan_group_count() == SCAN_BUCKETS  # a group is at least one bucket


@pytest.mark.django_db
def test_scanning_every_group_raises_what_a_full_scan_raises_once():
    hot = plant()
    raised = []
    for index in range(3):
        raised += sentinel_scan(group=CellGroup(index, 3)).evaluation.raised
    assert sorted(Alarm.objects.values_list("signal_id", flat=True)) == hot
    assert sorted(raised) == sorted(Alarm.objects.values_list("pk", flat=True))
    again = [sentinel_scan(group=CellGroup(i, 3)).evaluation.raised for i in range(3)]
    assert again == [[], [], []] and sentinel_scan().evaluation.raised == []


@pytest.mark.django_db
def test_the_beat_task_fans_out_one_task_per_group():
    hot = plant()
    with override_settings(ARIA_SCAN_GROUPS=4):
        summary = scan_task()  # tests run Celery eagerly: the group tasks run here
    assert summary["groups"] == 4
    assert sorted(Alarm.objects.values_list("signal_id", flat=True)) == hot


@pytest.mark.django_db
def test_a_group_scan_filters_both_tables_on_the_indexed_bucket_columns():
    plant()
    with CaptureQueriesContext(connection) as queries:
        sentinel_scan(group=CellGroup(1, 2))
    [read] = [q["sql"] for q in queries.captured_queries if "breach_since" in q["sql"] and "SELECT" in q["sql"][:7]]
    lo, hi = CellGroup(1, 2).buckets()[0], CellGroup(1, 2).buckets()[-1]
    assert f'"sentinel_signallatest"."scan_bucket" BETWEEN {lo} AND {hi}' in read
    assert f'"sentinel_signaldefinition"."scan_bucket" BETWEEN {lo} AND {hi}' in read
    assert "cell_id" not in read.split("WHERE", 1)[1].split("EXISTS", 1)[0]  # no per-row arithmetic on the cell


@pytest.mark.django_db
def test_a_group_scan_touches_only_its_own_signals():
    # Given every signal silent for an hour (all of them need attention: they are stale).
    plant(breaching_per_cell=0)
    old = timezone.now() - timedelta(hours=1)
    SignalLatest.objects.update(time=old)
    # When group 0 of 2 scans.
    summary = sentinel_scan(group=CellGroup(0, 2)).evaluation
    # Then it read and marked stale exactly its own cells' signals, and stamped only its rows.
    mine = {s for s in SignalLatest.objects.values_list("signal_id", flat=True) if group_of(s, 2) == 0}
    onboarded = set(
        SignalLatest.objects.filter(signal__cell__onboarding_complete=True).values_list("signal_id", flat=True)
    )
    assert summary.examined == len(mine & onboarded) == summary.stale_raised > 0
    assert set(StaleCondition.objects.values_list("signal_id", flat=True)) == mine & onboarded
    assert set(SignalLatest.objects.filter(scan_bucket__isnull=False).values_list("signal_id", flat=True)) == mine


@pytest.mark.django_db
def test_a_row_ingest_created_is_stamped_and_scanned_by_its_own_group():
    # Given a new signal whose first sample arrives through ingest (which leaves the bucket unset).
    cell = make_cell("G-NEW")
    signal = make_signal(cell, "temperature", alert=80.0, trip=95.0)
    samples_ingest(samples=[(signal.pk, timezone.now() - timedelta(hours=1), 20.0)])
    assert SignalLatest.objects.get(signal=signal).scan_bucket is None
    mine = cell_group(cell, 2)
    other = CellGroup(1 - mine.index, 2)
    # When the other group scans, then its own: only its own group stamps and scans it.
    assert sentinel_scan(group=other).evaluation.stale_raised == 0
    assert SignalLatest.objects.get(signal=signal).scan_bucket is None
    assert sentinel_scan(group=mine).evaluation.stale_raised == 1
    assert SignalLatest.objects.get(signal=signal).scan_bucket == SignalDefinition.objects.get(pk=signal.pk).scan_bucket


@pytest.mark.integration
@pytest.mark.django_db
def test_postgresql_answers_each_table_s_group_predicate_from_its_bucket_index():
    if connection.vendor != "postgresql":
        pytest.skip("PostgreSQL plan")
    plant()
    first, last = CellGroup(0, 2).buckets()[0], CellGroup(0, 2).buckets()[-1]
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")  # the plan shows whether an index CAN answer it
    for model in (SignalLatest, SignalDefinition):
        plan = model.objects.filter(scan_bucket__range=(first, last)).explain()
        assert f"{model._meta.db_table}_scan_bucket" in plan, plan
