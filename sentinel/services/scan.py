"""The periodic scan: expire timed shelves, detect stale signals, evaluate what needs attention."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from sentinel.metrics import SCAN_SECONDS
from sentinel.services.alarms import alarm_unshelve_expired
from sentinel.services.evaluation import EvaluationSummary, signals_evaluate
from sentinel.services.ingest import stale_window


@dataclass
class ScanSummary:
    unshelved: list[int]
    evaluation: EvaluationSummary

    def as_dict(self) -> dict:
        return {"unshelved": self.unshelved, **self.evaluation.as_dict()}


@SCAN_SECONDS.time()
def sentinel_scan(*, now: datetime | None = None) -> ScanSummary:
    """One pass over every enabled signal of onboarded cells, in a constant number of queries
    (plus one audit record per alarm transition). Safe to run twice at once: the one-open-alarm
    constraint keeps a second scan from raising a duplicate."""
    now = now or timezone.now()
    with transaction.atomic():
        unshelved = [a.pk for a in alarm_unshelve_expired(now=now)]
        evaluation = signals_evaluate(now=now, stale_after=stale_window())
    return ScanSummary(unshelved=unshelved, evaluation=evaluation)
