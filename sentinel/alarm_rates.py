"""Alarm rates on sorted raise times (pure, no database): 10-minute periods on the clock, floods on a
sliding 10-minute window (start above 10, end below 5, per ISA-18.2 / EEMUA 191), the busiest minute."""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from datetime import UTC, datetime, timedelta
from typing import Any

PERIOD = timedelta(minutes=10)
FLOOD_ABOVE = 10  # more than 10 alarms in 10 minutes starts a flood
FLOOD_ENDS_BELOW = 5  # ...which ends when fewer than 5 arrived in the last 10 minutes


def rate_buckets(times: list[datetime], start: datetime, end: datetime) -> list[dict[str, Any]]:
    """Alarms per 10-minute period on the clock (12:00, 12:10, …) covering [start, end); the first
    and last periods may be cut by the window."""
    period = PERIOD.total_seconds()
    origin = datetime.fromtimestamp(math.floor(start.timestamp() / period) * period, tz=UTC)
    count = max(1, math.ceil((end - origin) / PERIOD))
    counts = [0] * count
    for t in times:
        index = int((t - origin) / PERIOD)
        if 0 <= index < count:
            counts[index] += 1
    return [{"start": (origin + i * PERIOD).isoformat(), "count": c} for i, c in enumerate(counts)]


def _count_in_period(times: list[datetime], at: datetime) -> int:
    """Alarms that arrived in (at - 10 min, at]."""
    return bisect_right(times, at) - bisect_right(times, at - PERIOD)


def floods_find(times: list[datetime], *, until: datetime) -> list[dict[str, Any]]:
    """Floods in sorted raise times (see the module docstring). An unfinished one has end None."""
    moments = sorted({*times, *(t + PERIOD for t in times if t + PERIOD <= until)})
    arrivals = set(times)
    floods: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    for at in moments:
        count = _count_in_period(times, at)
        if current is None:
            if at in arrivals and count > FLOOD_ABOVE:
                first = times[bisect_right(times, at - PERIOD)]
                current = {"start": first, "peak": count, "peak_at": at}
        elif count < FLOOD_ENDS_BELOW:
            current["end"] = at
            floods.append(current)
            current = None
        elif count > current["peak"]:
            current.update(peak=count, peak_at=at)
    if current is not None:
        current["end"] = None
        floods.append(current)
    for flood in floods:
        stop = flood["end"] or until
        flood["alarms"] = bisect_right(times, stop) - bisect_left(times, flood["start"])
        flood["duration_minutes"] = round((stop - flood["start"]).total_seconds() / 60, 1)
        flood["ongoing"] = flood["end"] is None
        for key in ("start", "end", "peak_at"):
            flood[key] = flood[key].isoformat() if flood[key] else None
    return floods


def max_raises_within(times: list[datetime], seconds: float) -> int:
    """The most raises inside any `seconds`-long stretch (sorted times)."""
    best, left, span = 0, 0, timedelta(seconds=seconds)
    for right, t in enumerate(times):
        while t - times[left] >= span:
            left += 1
        best = max(best, right - left + 1)
    return best
