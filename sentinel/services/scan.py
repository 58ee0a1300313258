"""The periodic scan: expire timed shelves, detect stale signals, evaluate what needs attention.

Scale-out: the signals are split into `scan_group_count()` cell groups (a cell's signals always
in the same group: `cell_id mod count`), each scanned on its own (`sentinel_scan(group=…)`), so
several workers share one scan. Groups are disjoint; a signal evaluated twice at once anyway (two
overlapping rounds, or a round and an ingest) still raises one alarm: the one-open-alarm
constraint and the alarm row locks decide.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.db.models.functions import Mod
from django.db.models.lookups import Exact
from django.utils import timezone

from sentinel.metrics import SCAN_SECONDS
from sentinel.services.alarms import alarm_unshelve_expired
from sentinel.services.evaluation import EvaluationSummary, signals_evaluate
from sentinel.services.ingest import stale_window

DEFAULT_SCAN_GROUPS = 1


@dataclass(frozen=True)
class CellGroup:
    """The cells with `cell_id mod count == index`, and their signals."""

    index: int
    count: int

    def __post_init__(self) -> None:
        if self.count < 1 or not 0 <= self.index < self.count:
            raise ValueError(f"no cell group {self.index} of {self.count}")

    def scope(self) -> Q:
        """The group as a filter on anything with a `signal` (latest values, alarms): the
        database drops the other groups' rows before the costly part of the scan."""
        return Q(Exact(Mod("signal__cell_id", self.count), self.index))


def scan_group_count() -> int:
    """How many cell groups a scan is split into (setting `ARIA_SCAN_GROUPS`, default 1)."""
    return max(1, int(getattr(settings, "ARIA_SCAN_GROUPS", DEFAULT_SCAN_GROUPS)))


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
    with transaction.atomic():
        if group is None:
            unshelved = [a.pk for a in alarm_unshelve_expired(now=now)]
            evaluation = signals_evaluate(now=now, stale_after=stale_window())
        else:
            unshelved = []
            evaluation = signals_evaluate(now=now, stale_after=stale_window(), scope=group.scope())
    return ScanSummary(unshelved=unshelved, evaluation=evaluation, group=group)
