"""The periodic scan: expire timed shelves, detect stale signals, evaluate what needs attention.

Scale-out: the plant is split into `scan_group_count()` cell groups, each scanned on its own
(`sentinel_scan(group=…)`), so several workers share one scan. A cell's signals carry its scan
bucket (0..SCAN_BUCKETS-1 from the cell id, a generated column) and so do their latest-value rows
(a stamped copy); group `i` of `N` is the i-th of N equal ranges of buckets, and its scan filters
both tables on those indexed columns with a range, so it reads its own rows, not the whole plant
(a range, not a list of buckets: PostgreSQL costs a long IN list per row and picks worse plans).
The buckets never change with N: changing ARIA_SCAN_GROUPS regroups whole buckets without writing a row, and a new cell
simply has its bucket. Groups are disjoint; a signal evaluated twice at once anyway (two
overlapping rounds, one with an old group count, or a round and an ingest) still raises one
alarm: the one-open-alarm constraint and the alarm row locks decide.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.db import transaction
from django.db.models import OuterRef, Q, Subquery
from django.utils import timezone

from sentinel.metrics import SCAN_SECONDS
from sentinel.models import SCAN_BUCKETS, SignalDefinition, SignalLatest
from sentinel.services.alarms import alarm_unshelve_expired
from sentinel.services.evaluation import EvaluationSummary, id_list, signals_evaluate
from sentinel.services.ingest import stale_window

DEFAULT_SCAN_GROUPS = 1


@dataclass(frozen=True)
class CellGroup:
    """The cells whose scan bucket is in the `index`-th of `count` equal bucket ranges, and their
    signals (bucket b is in group b * count // SCAN_BUCKETS)."""

    index: int
    count: int

    def __post_init__(self) -> None:
        if not 1 <= self.count <= SCAN_BUCKETS or not 0 <= self.index < self.count:
            raise ValueError(f"no cell group {self.index} of {self.count}")

    def buckets(self) -> range:
        return range(-(-self.index * SCAN_BUCKETS // self.count), -(-(self.index + 1) * SCAN_BUCKETS // self.count))

    def scope(self) -> Q:
        """The group as a filter on the latest-value rows through both indexed bucket columns
        (theirs and their signal definitions'), so the database reads only this group's rows of
        either table."""
        first, last = self.buckets()[0], self.buckets()[-1]
        return Q(scan_bucket__range=(first, last), signal__scan_bucket__range=(first, last))


def scan_group_count() -> int:
    """How many cell groups a scan is split into (setting `ARIA_SCAN_GROUPS`, default 1; at most
    SCAN_BUCKETS)."""
    return min(SCAN_BUCKETS, max(1, int(getattr(settings, "ARIA_SCAN_GROUPS", DEFAULT_SCAN_GROUPS))))


def latest_buckets_stamp(*, group: CellGroup) -> int:
    """Copy the scan bucket onto the group's latest-value rows that have none yet (created by
    ingest since the last scan), so the group's scan reads them. Its own short transaction, rows
    locked in signal order like ingest's upsert. Returns how many rows were stamped."""
    with transaction.atomic():
        unstamped = list(
            SignalLatest.objects.select_for_update(of=("self",))
            .filter(scan_bucket__isnull=True, signal__scan_bucket__range=(group.buckets()[0], group.buckets()[-1]))
            .order_by("signal_id")
            .values_list("signal_id", flat=True)
        )
        if not unstamped:
            return 0
        bucket = SignalDefinition.objects.filter(pk=OuterRef("signal_id")).values("scan_bucket")[:1]
        return SignalLatest.objects.filter(signal_id__in=id_list(unstamped)).update(scan_bucket=Subquery(bucket))


@dataclass
class ScanSummary:
    unshelved: list[int]
    evaluation: EvaluationSummary
    group: CellGroup | None = None

    def as_dict(self) -> dict:
        group = {"group": [self.group.index, self.group.count]} if self.group else {}
        return {"unshelved": self.unshelved, **self.evaluation.as_dict(), **group}


def shelves_expire(*, now: datetime | None = None) -> list[int]:
    """Return timed-out shelved alarms to service (once per round, before the groups scan)."""
    with transaction.atomic():
        return [a.pk for a in alarm_unshelve_expired(now=now or timezone.now())]


@SCAN_SECONDS.time()
def sentinel_scan(*, now: datetime | None = None, group: CellGroup | None = None) -> ScanSummary:
    """One pass over every enabled signal of onboarded cells (or of one cell group), in a
    constant number of queries (plus one audit record per alarm transition). Without a group
    it also expires timed shelves. Safe to run twice at once: the one-open-alarm constraint
    keeps a second scan from raising a duplicate."""
    now = now or timezone.now()
    if group is not None:
        latest_buckets_stamp(group=group)
    with transaction.atomic():
        if group is None:
            unshelved = [a.pk for a in alarm_unshelve_expired(now=now)]
            evaluation = signals_evaluate(now=now, stale_after=stale_window())
        else:
            unshelved = []
            evaluation = signals_evaluate(now=now, stale_after=stale_window(), scope=group.scope())
    return ScanSummary(unshelved=unshelved, evaluation=evaluation, group=group)
