"""Alarm performance over a time window (ISA-18.2 / IEC 62682, EEMUA 191 targets, docs DOMAIN.md).

The operator position is the whole site (no `line_id`) or one production line (`line_id`): the
demo plant has one control room per line, so a line is the smallest position; the site view adds
up every line and also lists each line's own figures (`positions`).

What is computed, from the alarm table (each alarm = one annunciation, raised at `raised_at`):
- the annunciation rate per 10 minutes (aligned buckets) against the ~1 target and the 10 flood line;
- floods on a sliding 10-minute window: a flood starts when more than 10 alarms arrive within 10
  minutes (its start is the first of those alarms) and ends when the count over the last 10 minutes
  falls below 5; its peak is the highest 10-minute count inside it;
- the top 10 bad actors (signals by alarms raised) and their share of all alarms;
- chattering (an alarm flagged `chattering` by the clear-delay, or ≥ 3 raises of one signal within
  60 s) and fleeting alarms (cleared within `FLEETING_SECONDS`);
- standing alarms (annunciated now), stale ones (standing > 24 h), shelved and out-of-service lists
  (these four are the current state, whatever the window);
- the priority mix (trip → high, high_alert → medium, alert / low_alert → low).

A fixed number of queries whatever the number of alarms (at most five, see `alarm_performance`).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from statistics import median
from typing import Any

from django.db.models import Count, IntegerField, StdDev
from django.db.models.functions import Cast, Floor
from django.utils import timezone

from core.errors import InvalidInput, NotFound
from sentinel.alarm_rates import FLOOD_ABOVE, FLOOD_ENDS_BELOW, floods_find, max_raises_within, rate_buckets
from sentinel.alarm_tuning import FLEETING_SECONDS, tuning_suggestion
from sentinel.choices import ANNUNCIATED_STATES, OPEN_ALARM_STATES, AlarmState
from sentinel.history.reading import EpochSeconds
from sentinel.models import Alarm, Line, SignalSample
from sentinel.services.chatter import CHATTER_RAISES, CHATTER_WINDOW_SECONDS

TARGET_PER_PERIOD = 1  # "very likely acceptable"
MANAGEABLE_PER_PERIOD = 2  # "maximum manageable"
STALE_AFTER = timedelta(hours=24)
TOP_N = 10
MAX_WINDOW = timedelta(days=31)
EARLIEST = datetime(1970, 1, 2, tzinfo=UTC)  # before the epoch there is no alarm history to read
MAX_LISTED = 100
PRIORITY = {"trip": "high", "high_alert": "medium", "alert": "low", "low_alert": "low"}
PRIORITY_TARGET_PERCENT = {"high": 5, "medium": 15, "low": 80}
_NOISE_BUCKETS = 120  # the noise estimate: median of per-bucket σ (a trend barely moves in one)

_ALARM_FIELDS = (
    "id",
    "signal_id",
    "raised_at",
    "cleared_at",
    "state",
    "threshold_field",
    "threshold_value",
    "peak_value",
    "direction",
    "chattering",
    "signal__key",
    "signal__display_name",
    "signal__unit",
    "signal__cell_id",
    "signal__cell__tag",
    "signal__cell__line_id",
    "signal__cell__line__name",
    "signal__low_alert",
    "signal__alert",
    "signal__high_alert",
    "signal__trip",
    "signal__deadband",
    "signal__on_delay_seconds",
)


@dataclass(frozen=True)
class PerformanceWindow:
    start: datetime
    end: datetime
    line_id: int | None = None


def performance_window(
    *,
    start: datetime | None = None,
    end: datetime | None = None,
    hours: float | None = None,
    line_id: int | None = None,
    now: datetime | None = None,
) -> PerformanceWindow:
    """The window [start, end): `end` defaults to now, `start` to `end - hours` (24 h by default).
    Naive datetimes are UTC. Bad bounds are a 422 naming the field."""
    now = now or timezone.now()
    end = _aware(end) if end is not None else now
    if end > now + timedelta(minutes=5):
        raise InvalidInput("end: must not be in the future.", field="end")
    if start is not None and hours is not None:
        raise InvalidInput("hours: give start or hours, not both.", field="hours")
    if hours is not None and not (0 < hours <= MAX_WINDOW.total_seconds() / 3600):
        raise InvalidInput(f"hours: must be more than 0 and at most {MAX_WINDOW.days * 24}.", field="hours")
    if start is None:
        try:
            start = end - timedelta(hours=hours if hours is not None else 24)
        except OverflowError:
            raise InvalidInput("end: too early for that window.", field="end") from None
    start = _aware(start)
    if start < EARLIEST:
        raise InvalidInput(f"start: must be after {EARLIEST.date().isoformat()}.", field="start")
    if start >= end:
        raise InvalidInput("start: must be before end.", field="start")
    if end - start > MAX_WINDOW:
        raise InvalidInput(f"start: the window is at most {MAX_WINDOW.days} days.", field="start")
    if line_id is not None and line_id < 1:
        raise InvalidInput("line_id: must be a positive id.", field="line_id")
    return PerformanceWindow(start=start, end=end, line_id=line_id)


def _aware(value: datetime) -> datetime:
    return value if timezone.is_aware(value) else value.replace(tzinfo=UTC)


# --- the report -----------------------------------------------------------------------------


def _signal_out(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "signal_id": row["signal_id"],
        "cell_id": row["signal__cell_id"],
        "cell_tag": row["signal__cell__tag"],
        "signal_key": row["signal__key"],
        "display_name": row["signal__display_name"],
        "unit": row["signal__unit"],
        "line": row["signal__cell__line__name"],
    }


def _alarm_out(row: dict[str, Any], now: datetime) -> dict[str, Any]:
    return {
        "alarm_id": row["id"],
        **_signal_out(row),
        "state": row["state"],
        "threshold_field": row["threshold_field"],
        "threshold_value": row["threshold_value"],
        "priority": PRIORITY.get(row["threshold_field"], "low"),
        "raised_at": row["raised_at"].isoformat(),
        "age_hours": round((now - row["raised_at"]).total_seconds() / 3600, 2),
    }


def _rate_summary(times: list[datetime], window: PerformanceWindow, floods: list[dict[str, Any]]) -> dict[str, Any]:
    buckets = rate_buckets(times, window.start, window.end)
    counts = [b["count"] for b in buckets]
    hours = (window.end - window.start).total_seconds() / 3600
    in_flood = 0.0
    for flood in floods:
        stop = datetime.fromisoformat(flood["end"]) if flood["end"] else window.end
        in_flood += (min(stop, window.end) - max(datetime.fromisoformat(flood["start"]), window.start)).total_seconds()
    average = len(times) / max(hours * 6, 1e-9)
    return {
        "buckets": buckets,
        "total": len(times),
        "average_per_10_min": round(average, 2),
        "max_per_10_min": max(counts, default=0),
        "per_hour": round(len(times) / hours, 2),
        "per_day": round(len(times) / hours * 24, 1),
        "percent_periods_above_target": round(100 * sum(c > TARGET_PER_PERIOD for c in counts) / len(counts), 1),
        "percent_periods_in_flood": round(100 * sum(c > FLOOD_ABOVE for c in counts) / len(counts), 1),
        "percent_time_in_flood": round(100 * in_flood / (hours * 3600), 1),
        "verdict": "acceptable"
        if average <= TARGET_PER_PERIOD
        else ("manageable" if average <= MANAGEABLE_PER_PERIOD else "overloaded"),
    }


def _noise_by_signal(signal_ids: list[int], window: PerformanceWindow) -> dict[int, float]:
    """Each signal's measurement noise: the median of its per-bucket standard deviations (one query)."""
    if not signal_ids:
        return {}
    width = max(60.0, (window.end - window.start).total_seconds() / _NOISE_BUCKETS)
    rows = (
        SignalSample.objects.filter(signal_id__in=signal_ids, time__gte=window.start, time__lt=window.end)
        .annotate(bucket=Cast(Floor((EpochSeconds("time") - window.start.timestamp()) / width), IntegerField()))
        .values("signal_id", "bucket")
        .annotate(sd=StdDev("value"), n=Count("*"))
        .filter(n__gte=5)
    )
    spreads: dict[int, list[float]] = defaultdict(list)
    for row in rows:
        if row["sd"] is not None:
            spreads[row["signal_id"]].append(float(row["sd"]))
    return {signal_id: median(values) for signal_id, values in spreads.items()}


def _listed(items: list[dict[str, Any]]) -> dict[str, Any]:
    return {"count": len(items), "items": items[:MAX_LISTED]}


def alarm_performance(window: PerformanceWindow, *, now: datetime | None = None) -> dict[str, Any]:
    """The alarm-performance report of one position over `window` (JSON-ready). Four queries
    whatever the number of alarms: the lines, the alarms raised in the window, the open alarms and
    the bad actors' sample noise (skipped when there are no alarms)."""
    now = now or timezone.now()
    lines = list(Line.objects.order_by("name").values("id", "name", "site__name"))
    position: dict[str, Any] = {"kind": "site", "line_id": None, "name": "Whole site"}
    if window.line_id is not None:
        line = next((line for line in lines if line["id"] == window.line_id), None)
        if line is None:
            raise NotFound(f"line_id: no line {window.line_id}.", field="line_id")
        position = {"kind": "line", "line_id": line["id"], "name": line["name"]}
    scope = {"signal__cell__line_id": window.line_id} if window.line_id is not None else {}
    rows = list(
        Alarm.objects.filter(raised_at__gte=window.start, raised_at__lt=window.end, **scope)
        .order_by("raised_at", "id")
        .values(*_ALARM_FIELDS)
    )
    times = [row["raised_at"] for row in rows]
    floods = floods_find(times, until=window.end)
    rate = _rate_summary(times, window, floods)

    by_signal: dict[int, list[dict[str, Any]]] = defaultdict(list)
    by_line: dict[int, list[datetime]] = defaultdict(list)
    for row in rows:
        by_signal[row["signal_id"]].append(row)
        by_line[row["signal__cell__line_id"]].append(row["raised_at"])
    fleeting = [
        {**_alarm_out(row, now), "seconds": round((row["cleared_at"] - row["raised_at"]).total_seconds(), 1)}
        for row in rows
        if row["cleared_at"] is not None and (row["cleared_at"] - row["raised_at"]).total_seconds() <= FLEETING_SECONDS
    ]
    fleeting_by_signal = Counter(item["signal_id"] for item in fleeting)
    chattering = []
    for alarms in by_signal.values():
        burst = max_raises_within([a["raised_at"] for a in alarms], CHATTER_WINDOW_SECONDS)
        flagged = any(a["chattering"] for a in alarms)
        if flagged or burst >= CHATTER_RAISES:
            chattering.append(
                {**_signal_out(alarms[0]), "alarms": len(alarms), "max_in_60s": burst, "flagged": flagged}
            )
    chattering.sort(key=lambda item: (-item["alarms"], item["cell_tag"], item["signal_key"]))
    chatter_ids = {item["signal_id"]: item for item in chattering}

    ranked = sorted(by_signal.items(), key=lambda kv: (-len(kv[1]), kv[1][0]["signal__cell__tag"], kv[0]))[:TOP_N]
    open_rows = list(
        Alarm.objects.filter(state__in=OPEN_ALARM_STATES, **scope)
        .order_by("raised_at", "id")
        .values(*_ALARM_FIELDS, "signal__latest__stale", "shelved_until", "shelved_until_work_order_closes")
    )
    open_by_signal = {row["signal_id"]: row for row in open_rows}
    noise = _noise_by_signal([signal_id for signal_id, _ in ranked], window)
    bad_actors = []
    for signal_id, alarms in ranked:
        facts = {
            "signal": alarms[0],
            "alarms": alarms,
            "chattering": chatter_ids.get(signal_id),
            "fleeting": fleeting_by_signal[signal_id],
            "open": open_by_signal.get(signal_id),
            "noise": noise.get(signal_id),
            "now": now,
        }
        bad_actors.append(
            {
                **_signal_out(alarms[0]),
                "count": len(alarms),
                "share_percent": round(100 * len(alarms) / len(rows), 1),
                "chattering": signal_id in chatter_ids,
                "fleeting": fleeting_by_signal[signal_id],
                "noise": noise.get(signal_id),
                "suggestion": tuning_suggestion(facts),
            }
        )

    standing = []
    shelved = []
    out_of_service = []
    for row in open_rows:
        item = {**_alarm_out(row, now), "signal_stale": bool(row["signal__latest__stale"])}
        if row["state"] in ANNUNCIATED_STATES:
            standing.append({**item, "stale": now - row["raised_at"] > STALE_AFTER})
        elif row["state"] == AlarmState.SHELVED:
            until = row["shelved_until"]
            shelved.append(
                {
                    **item,
                    "shelved_until": until.isoformat() if until else None,
                    "until_work_order_closes": row["shelved_until_work_order_closes"],
                }
            )
        elif row["state"] == AlarmState.OUT_OF_SERVICE:
            out_of_service.append(item)

    mix = Counter(PRIORITY.get(row["threshold_field"], "low") for row in rows)
    names = {line["id"]: line["name"] for line in lines}
    return {
        "window": {
            "start": window.start.isoformat(),
            "end": window.end.isoformat(),
            "hours": round((window.end - window.start).total_seconds() / 3600, 2),
            "position": position,
        },
        "targets": {
            "per_10_min_target": TARGET_PER_PERIOD,
            "per_10_min_manageable": MANAGEABLE_PER_PERIOD,
            "flood_above_per_10_min": FLOOD_ABOVE,
            "flood_ends_below_per_10_min": FLOOD_ENDS_BELOW,
            "chatter": f"≥ {CHATTER_RAISES} raises within {CHATTER_WINDOW_SECONDS} s",
            "fleeting_seconds": FLEETING_SECONDS,
            "stale_hours": STALE_AFTER.total_seconds() / 3600,
            "top_n": TOP_N,
        },
        "lines": [{"id": line["id"], "name": line["name"], "site": line["site__name"]} for line in lines],
        "rate": rate,
        "positions": [
            {
                "line_id": line_id,
                "line": names.get(line_id, ""),
                "total": len(line_times),
                "max_per_10_min": max(b["count"] for b in rate_buckets(line_times, window.start, window.end)),
                "floods": len(floods_find(line_times, until=window.end)),
            }
            for line_id, line_times in sorted(by_line.items(), key=lambda kv: names.get(kv[0], ""))
        ],
        "floods": floods,
        "bad_actors": bad_actors,
        "top10_share_percent": round(100 * sum(b["count"] for b in bad_actors) / len(rows), 1) if rows else 0.0,
        "chattering": _listed(chattering),
        "fleeting": _listed(fleeting),
        "standing": _listed(standing),
        "stale": _listed([item for item in standing if item["stale"]]),
        "shelved": _listed(shelved),
        "out_of_service": _listed(out_of_service),
        "priority_mix": {
            level: {
                "count": mix[level],
                "percent": round(100 * mix[level] / len(rows), 1) if rows else 0.0,
                "target_percent": target,
            }
            for level, target in PRIORITY_TARGET_PERCENT.items()
        },
    }
