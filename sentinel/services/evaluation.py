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
from sentinel.models import Alarm, Cell, SignalLatest, StaleCondition
from sentinel.services.chatter import ClearCandidate, chatter_decide, chatter_reset_clock
from sentinel.services.detection import (
    AlarmEscalation,
    AlarmRaise,
    alarm_clear_many,
    alarm_escalate_many,
    alarm_raise_many,
    alarm_record_peaks,
)
from sentinel.thresholds import BreachResult, Thresholds, evaluate_threshold, is_clear

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
    attention: Q = (
        Q(value__gt=F("signal__alert"))
        | Q(value__gt=F("signal__high_alert"))
        | Q(value__gt=F("signal__trip"))
        | Q(value__lt=F("signal__low_alert"))
        | Q(breach_since__isnull=False)
        | Q(stale=True)
        | Q(Exists(open_alarm))
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
    newly: list[int] = []
    candidates: list[tuple[int, datetime]] = []
    stale: set[int] = set()
    for row in rows:
        signal_id, time, is_stale = row[0], row[1], row[4]
        if time < stale_before:
            stale.add(signal_id)
            if not is_stale:
                newly.append(signal_id)
        elif is_stale:
            candidates.append((signal_id, time))
    returned = _returned_since_marked(candidates)
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


def _returned_since_marked(candidates: list[tuple[int, datetime]]) -> list[int]:
    """Stale signals whose latest sample is recent AND newer than the mark: a source that declared
    a signal dead (a Sparkplug death certificate, a bad OPC UA status) flags it while its last
    value is still recent, and only a sample after that mark brings it back."""
    if not candidates:
        return []
    marked: dict[int, datetime] = {}
    for chunk in _chunks([s for s, _ in candidates]):
        marked.update(
            StaleCondition.objects.filter(signal_id__in=id_list(chunk), cleared_at__isnull=True).values_list(
                "signal_id", "raised_at"
            )
        )
    return [s for s, time in candidates if s not in marked or time > marked[s]]


def _open_alarms(signal_ids: list[int]) -> dict[int, tuple]:
    """The open alarm of each of these signals (the rows just read, already in scope): only
    their alarms are read, not every open alarm of the plant, so a cell group reads its own."""
    found: dict[int, tuple] = {}
    batches = [signal_ids] if connection.vendor == "postgresql" else list(_chunks(signal_ids))
    for batch in batches:
        found.update(
            (a[1], a)
            for a in Alarm.objects.filter(state__in=OPEN_ALARM_STATES, signal_id__in=id_list(batch))
            .order_by()
            .values_list("pk", "signal_id", "state", "severity", "direction", "peak_value", "chattering", "clear_since")
        )
    return found


def signals_evaluate(
    *,
    now: datetime | None = None,
    signal_ids: Collection[int] | None = None,
    stale_after: timedelta | None = None,
    scope: Q | None = None,
) -> EvaluationSummary:
    """Evaluate `signal_ids` (ingest) or every signal needing attention (scan, with `stale_after`
    set: signals silent that long become stale), within `scope` if given (a filter on the
    latest-value rows, e.g. a scan's cell group). Raises, escalates and clears alarms."""
    now = now or timezone.now()
    summary = EvaluationSummary()
    ids = None if signal_ids is None else list(signal_ids)
    if ids is not None and not ids:
        return summary  # nothing to evaluate: not even a savepoint (ingest's usual in-band batch)
    with transaction.atomic():
        rows_qs = _in_scope()
        if ids is not None:
            rows_qs = rows_qs.filter(signal_id__in=id_list(ids))
        if scope is not None:
            rows_qs = rows_qs.filter(scope)
        rows_qs = rows_qs.filter(_needs_attention(now - stale_after if stale_after is not None else None))
        rows = list(rows_qs.values_list(*_ROW))
        summary.examined = len(rows)
        if not rows:
            return summary
        open_alarms = _open_alarms([row[0] for row in rows])

        if stale_after is not None:
            stale = _mark_stale(rows, now - stale_after, now, summary)
        else:
            stale = {row[0] for row in rows if row[4]}

        _decide_and_apply(rows, open_alarms, stale, summary, now)
    return summary


def _due(
    signal_id: int, breach: BreachResult, value: float, time: datetime, since: datetime, on_delay: int, now: datetime
) -> AlarmRaise | None:
    """The raise of a breach whose on-delay has run, else None (still pending).

    On-delay is time, not samples: a breach that began at `since` is due at `since + on_delay`
    whether newer samples showed it or the signal went silent (the scan sees it then). An alarm
    due by its samples is raised at the sample's time; one due by the clock, when the delay ran out.
    """
    delay = timedelta(seconds=on_delay or 0)
    if time - since >= delay:
        return AlarmRaise(signal_id, breach, value, time)
    if max(now, time) - since >= delay:
        return AlarmRaise(signal_id, breach, value, since + delay)
    return None


@dataclass
class _Plan:
    """What one evaluation pass decided, applied afterwards in the documented lock order."""

    start_breach: list[int] = field(default_factory=list)  # breach clock starts at the row's time
    restart_breach: list[int] = field(default_factory=list)  # swung sides: a new breach, a new clock
    end_breach: list[int] = field(default_factory=list)
    raises: list[AlarmRaise] = field(default_factory=list)
    swing_raises: dict[int, AlarmRaise | None] = field(default_factory=dict)  # alarm id → other side's raise
    escalations: list[AlarmEscalation] = field(default_factory=list)
    may_clear: list[ClearCandidate] = field(default_factory=list)  # cleared unless chatter holds them
    recrossed: list[int] = field(default_factory=list)  # chattering alarms whose clear stretch ended
    peaks: list[tuple[int, float]] = field(default_factory=list)
    intake_cells: set[int] = field(default_factory=set)  # cells that may get or change a work order

    def touched_alarms(self) -> set[int]:
        return {
            *(c.alarm_id for c in self.may_clear),
            *(e.alarm_id for e in self.escalations),
            *self.recrossed,
            *(pk for pk, _ in self.peaks),
        }


def _decide(
    rows: list[tuple], open_alarms: dict[int, tuple], stale: set[int], summary: EvaluationSummary, now: datetime
) -> _Plan:
    plan = _Plan()
    for signal_id, time, value, breach_since, _stale, cell_id, low, alert, high, trip, deadband, on_delay in rows:
        thresholds = Thresholds(low, alert, high, trip, deadband or 0.0)
        breach = evaluate_threshold(thresholds, value)
        alarm = open_alarms.get(signal_id)
        if signal_id in stale:
            # No fresh value: the signal's own alarm neither clears nor escalates on it (its
            # siblings are judged on their own values). A breach it showed while fresh (its clock
            # started then) still becomes an alarm once its on-delay has run.
            due = None
            if alarm is None and breach.breached and breach_since is not None:
                due = _due(signal_id, breach, value, time, breach_since or time, on_delay, now)
            if due is not None:
                plan.raises.append(due)
                plan.intake_cells.add(cell_id)
            elif alarm is None and breach.breached:
                summary.pending += 1
            else:
                summary.suppressed += 1
            continue
        if breach.breached and breach_since is None:
            plan.start_breach.append(signal_id)
        elif not breach.breached and breach_since is not None:
            plan.end_breach.append(signal_id)
        if alarm is not None:
            pk, _, state, severity, direction, peak, chattering, clear_since = alarm
            if state in AUTO_CLEARABLE_STATES and is_clear(thresholds, value, direction=direction):
                # Back in band, or swung past the band to the other side's limit: either way a
                # transition, which the chatter rule counts before anything clears.
                plan.may_clear.append(
                    ClearCandidate(pk, signal_id, state, value, chattering, clear_since, swung=breach.breached)
                )
                if breach.breached:
                    plan.restart_breach.append(signal_id)
                    plan.swing_raises[pk] = _due(signal_id, breach, value, time, time, on_delay, now)
                    plan.intake_cells.add(cell_id)
                continue
            if chattering and clear_since is not None and state in AUTO_CLEARABLE_STATES:
                plan.recrossed.append(pk)
            if breach.breached and breach.direction == direction:
                if breach.severity == Severity.TRIP and severity == Severity.ALERT:
                    plan.escalations.append(AlarmEscalation(pk, breach, value))
                    plan.intake_cells.add(cell_id)
                elif (value > peak) if direction == Direction.HIGH else (value < peak):
                    plan.peaks.append((pk, value))
            continue
        if not breach.breached:
            continue
        due = _due(signal_id, breach, value, time, breach_since or time, on_delay, now)
        if due is None:
            summary.pending += 1
        else:
            plan.raises.append(due)
            plan.intake_cells.add(cell_id)
    return plan


def _lock_in_order(plan: _Plan) -> None:
    """Take the row locks this pass needs in the one documented order (docs/KERNEL.md): the open
    alarms it may move, then the cells whose work orders the receivers may open or change (the
    cell row is the work-order intake lock), each in pk order. The receivers' work-order locks
    come after, so a concurrent close (alarms, then its work order) never waits in a cycle."""
    alarms = sorted(plan.touched_alarms())
    if alarms:
        list(Alarm.objects.select_for_update().filter(pk__in=id_list(alarms)).order_by("pk").values_list("pk"))
    if plan.intake_cells:
        cells = sorted(plan.intake_cells)
        list(Cell.objects.select_for_update().filter(pk__in=id_list(cells)).order_by("pk").values_list("pk"))


def _decide_and_apply(
    rows: list[tuple], open_alarms: dict[int, tuple], stale: set[int], summary: EvaluationSummary, now: datetime
) -> None:
    plan = _decide(rows, open_alarms, stale, summary, now)
    if plan.start_breach:
        # The breach starts at the value that showed it: the row's own time.
        for chunk in _chunks(sorted(plan.start_breach)):
            SignalLatest.objects.filter(signal_id__in=id_list(chunk), breach_since__isnull=True).update(
                breach_since=F("time")
            )
    if plan.restart_breach:
        for chunk in _chunks(sorted(plan.restart_breach)):
            SignalLatest.objects.filter(signal_id__in=id_list(chunk)).update(breach_since=F("time"))
    if plan.end_breach:
        _update(plan.end_breach, breach_since=None)
    _lock_in_order(plan)
    chatter = chatter_decide(plan.may_clear, now=now)
    summary.chatter_held = chatter.held
    chatter_reset_clock(plan.recrossed)
    # Clears first: a signal that swung to the other side (and is not chattering) gets its new
    # alarm below, once its own on-delay has run.
    summary.cleared = [a.pk for a in alarm_clear_many(values=chatter.clears, now=now)]
    raises = list(plan.raises)
    for alarm_id in summary.cleared:
        if alarm_id in plan.swing_raises:
            due = plan.swing_raises[alarm_id]
            if due is None:
                summary.pending += 1
            else:
                raises.append(due)
    summary.escalated = [a.pk for a in alarm_escalate_many(escalations=plan.escalations)]
    alarm_record_peaks(peaks=plan.peaks)
    summary.raised = [a.pk for a in alarm_raise_many(raises=sorted(raises, key=lambda r: r.signal_id))]
