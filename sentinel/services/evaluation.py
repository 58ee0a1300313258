"""Evaluate signals' latest values against their thresholds and drive the alarms.

Shared by the scan (every enabled signal of onboarded cells) and ingest (the signals just
written). A constant number of queries whatever the number of signals: one read of the rows
that need attention, one of the open alarms, grouped UPDATEs, and the batched transitions.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db import connection, transaction
from django.db.models import Exists, F, OuterRef, Q
from django.db.models.expressions import RawSQL
from django.utils import timezone

from sentinel.choices import AUTO_CLEARABLE_STATES, OPEN_ALARM_STATES, Direction, Severity
from sentinel.models import Alarm, SignalLatest, StaleCondition
from sentinel.services.chatter import ClearCandidate, chatter_decide, chatter_reset_clock
from sentinel.services.detection import (
    AlarmEscalation,
    AlarmRaise,
    alarm_clear_many,
    alarm_escalate_many,
    alarm_raise_many,
    alarm_record_peaks,
)
from sentinel.thresholds import Thresholds, evaluate_threshold, is_clear

# Each id list in one UPDATE stays below the drivers' parameter limits.
_CHUNK = 5000

_ROW = (
    "signal_id",
    "time",
    "value",
    "breach_since",
    "stale",
    "signal__cell_id",
    "signal__low_alert",
    "signal__alert",
    "signal__high_alert",
    "signal__trip",
    "signal__deadband",
    "signal__on_delay_seconds",
)


@dataclass
class EvaluationSummary:
    examined: int = 0
    raised: list[int] = field(default_factory=list)
    escalated: list[int] = field(default_factory=list)
    cleared: list[int] = field(default_factory=list)
    pending: int = 0
    suppressed: int = 0
    chatter_held: list[int] = field(default_factory=list)
    stale_raised: int = 0
    stale_cleared: int = 0

    def as_dict(self) -> dict:
        return {
            "examined": self.examined,
            "raised": self.raised,
            "escalated": self.escalated,
            "cleared": self.cleared,
            "pending": self.pending,
            "suppressed": self.suppressed,
            "chatter_held": self.chatter_held,
            "stale_raised": self.stale_raised,
            "stale_cleared": self.stale_cleared,
        }


def _in_scope():
    return SignalLatest.objects.filter(signal__enabled=True, signal__cell__onboarding_complete=True)


def _needs_attention(stale_before: datetime | None) -> Q:
    """Rows that may change something; the rest are normal and stay normal (NULL limits never
    match). The database does this filtering, so a scan reads ~the breaching 1 %, not every row."""
    open_alarm = Alarm.objects.filter(signal_id=OuterRef("signal_id"), state__in=OPEN_ALARM_STATES)
    attention = (
        Q(value__gt=F("signal__alert"))
        | Q(value__gt=F("signal__high_alert"))
        | Q(value__gt=F("signal__trip"))
        | Q(value__lt=F("signal__low_alert"))
        | Q(breach_since__isnull=False)
        | Q(stale=True)
        | Exists(open_alarm)
    )
    if stale_before is not None:
        attention |= Q(time__lt=stale_before)
    return attention


def id_list(ids: Collection[int]):
    """A value for `field__in=`: on PostgreSQL one array parameter (`IN (SELECT unnest(%s))`)
    instead of thousands of placeholders; elsewhere the plain list."""
    ids = list(ids)
    if connection.vendor == "postgresql":
        return RawSQL("SELECT unnest(%s::bigint[])", (ids,))
    return ids


def _chunks(ids: list[int]):
    for i in range(0, len(ids), _CHUNK):
        yield ids[i : i + _CHUNK]


def _update(ids: list[int], **values) -> None:
    for chunk in _chunks(sorted(ids)):
        SignalLatest.objects.filter(signal_id__in=id_list(chunk)).update(**values)


def _mark_stale(rows: list[tuple], stale_before: datetime, now: datetime, summary: EvaluationSummary) -> set[int]:
    """Flag signals silent since `stale_before` (one StaleCondition each), unflag returning ones.
    Returns the stale signal ids."""
    newly, returned, stale = [], [], set()
    for row in rows:
        signal_id, time, is_stale = row[0], row[1], row[4]
        if time < stale_before:
            stale.add(signal_id)
            if not is_stale:
                newly.append(signal_id)
        elif is_stale:
            returned.append(signal_id)
    if newly:
        _update(newly, stale=True)
        StaleCondition.objects.bulk_create(
            [StaleCondition(signal_id=s, raised_at=now) for s in newly], ignore_conflicts=True, batch_size=_CHUNK
        )
    if returned:
        _update(returned, stale=False)
        for chunk in _chunks(returned):
            StaleCondition.objects.filter(signal_id__in=id_list(chunk), cleared_at__isnull=True).update(cleared_at=now)
    summary.stale_raised, summary.stale_cleared = len(newly), len(returned)
    return stale


def signals_evaluate(
    *,
    now: datetime | None = None,
    signal_ids: Collection[int] | None = None,
    stale_after: timedelta | None = None,
) -> EvaluationSummary:
    """Evaluate `signal_ids` (ingest) or every signal needing attention (scan, with `stale_after`
    set: signals silent that long become stale). Raises, escalates and clears alarms."""
    now = now or timezone.now()
    summary = EvaluationSummary()
    with transaction.atomic():
        rows_qs = _in_scope()
        alarms_qs = Alarm.objects.filter(
            state__in=OPEN_ALARM_STATES, signal__enabled=True, signal__cell__onboarding_complete=True
        )
        if signal_ids is not None:
            ids = list(signal_ids)
            if not ids:
                return summary
            rows_qs = rows_qs.filter(signal_id__in=id_list(ids))
            alarms_qs = alarms_qs.filter(signal_id__in=id_list(ids))
        rows_qs = rows_qs.filter(_needs_attention(now - stale_after if stale_after is not None else None))
        rows = list(rows_qs.values_list(*_ROW))
        summary.examined = len(rows)
        if not rows:
            return summary
        open_alarms = {
            a[1]: a
            for a in alarms_qs.values_list(
                "pk", "signal_id", "state", "severity", "direction", "peak_value", "chattering", "clear_since"
            )
        }

        if stale_after is not None:
            stale = _mark_stale(rows, now - stale_after, now, summary)
            stale_cell_ids = {row[5] for row in rows if row[0] in stale}
        else:
            stale = {row[0] for row in rows if row[4]}
            cells = {row[5] for row in rows}
            stale_cell_ids = set(
                _in_scope()
                .filter(stale=True, signal__cell_id__in=id_list(cells))
                .values_list("signal__cell_id", flat=True)
            )

        _decide_and_apply(rows, open_alarms, stale, stale_cell_ids, summary, now)
    return summary


def _decide_and_apply(
    rows: list[tuple],
    open_alarms: dict[int, tuple],
    stale: set[int],
    stale_cell_ids: set[int],
    summary: EvaluationSummary,
    now: datetime,
) -> None:
    start_breach, end_breach = [], []
    raises: list[AlarmRaise] = []
    escalations: list[AlarmEscalation] = []
    clears: dict[int, float] = {}
    may_clear: list[ClearCandidate] = []  # back in band: cleared unless the chatter clear-delay holds them
    recrossed: list[int] = []  # chattering alarms whose clear stretch just ended
    peaks: list[tuple[int, float]] = []
    for signal_id, time, value, breach_since, _stale, cell_id, low, alert, high, trip, deadband, on_delay in rows:
        if signal_id in stale:
            continue  # no fresh value: neither raise nor clear on it
        thresholds = Thresholds(low, alert, high, trip, deadband or 0.0)
        breach = evaluate_threshold(thresholds, value)
        if breach.breached and breach_since is None:
            start_breach.append(signal_id)
        elif not breach.breached and breach_since is not None:
            end_breach.append(signal_id)
        alarm = open_alarms.get(signal_id)
        if alarm is not None:
            pk, _, state, severity, direction, peak, chattering, clear_since = alarm
            if state in AUTO_CLEARABLE_STATES and is_clear(thresholds, value, direction=direction):
                if breach.breached:  # jumped to the other side: clear now, raise that side below
                    clears[pk] = value
                    alarm = None
                else:
                    may_clear.append(ClearCandidate(pk, signal_id, state, value, chattering, clear_since))
                    continue
            else:
                if chattering and clear_since is not None and state in AUTO_CLEARABLE_STATES:
                    recrossed.append(pk)
                if breach.breached and breach.direction == direction:
                    if breach.severity == Severity.TRIP and severity == Severity.ALERT:
                        escalations.append(AlarmEscalation(pk, breach, value))
                    elif (value > peak) if direction == Direction.HIGH else (value < peak):
                        peaks.append((pk, value))
                continue
        if not breach.breached:
            continue
        if cell_id in stale_cell_ids:
            summary.suppressed += 1
            continue
        since = breach_since or time
        if (time - since).total_seconds() >= (on_delay or 0):
            raises.append(AlarmRaise(signal_id, breach, value, time))
        else:
            summary.pending += 1

    if start_breach:
        # The breach starts at the value that showed it: the row's own time.
        for chunk in _chunks(sorted(start_breach)):
            SignalLatest.objects.filter(signal_id__in=id_list(chunk), breach_since__isnull=True).update(
                breach_since=F("time")
            )
    if end_breach:
        _update(end_breach, breach_since=None)
    chatter = chatter_decide(may_clear, now=now)
    clears.update(chatter.clears)
    summary.chatter_held = chatter.held
    chatter_reset_clock(recrossed)
    # Clears first: a signal that jumped from one side to the other gets its new alarm below.
    summary.cleared = [a.pk for a in alarm_clear_many(values=clears)]
    summary.escalated = [a.pk for a in alarm_escalate_many(escalations=escalations)]
    alarm_record_peaks(peaks=peaks)
    summary.raised = [a.pk for a in alarm_raise_many(raises=raises)]
