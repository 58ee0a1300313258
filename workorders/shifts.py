"""The shift calendar: morning 06–14, afternoon 14–22, night 22–06 (local time, TIME_ZONE).

A night shift belongs to the date it starts on: 03:00 on the 5th is the night shift of the 4th.
Callers bound moments and dates first (the logbook and handover services do): at the calendar's
edges (year 1, year 9999) the local date or the shift's end overflows.
"""

from __future__ import annotations

from datetime import date as Date
from datetime import datetime, time, timedelta

from django.utils import timezone

from workorders.choices import Shift

SHIFT_START_HOUR = {Shift.MORNING: 6, Shift.AFTERNOON: 14, Shift.NIGHT: 22}
SHIFT_HOURS = 8
NEXT_SHIFT = {Shift.MORNING: Shift.AFTERNOON, Shift.AFTERNOON: Shift.NIGHT, Shift.NIGHT: Shift.MORNING}


def shift_at(moment: datetime) -> tuple[Date, str]:
    """The (date, shift) a moment falls in."""
    local = timezone.localtime(moment)
    if 6 <= local.hour < 14:
        return local.date(), Shift.MORNING.value
    if 14 <= local.hour < 22:
        return local.date(), Shift.AFTERNOON.value
    day = local.date() if local.hour >= 22 else local.date() - timedelta(days=1)
    return day, Shift.NIGHT.value


def shift_window(day: Date, shift: str) -> tuple[datetime, datetime]:
    """[start, end) of a shift as aware datetimes in the current time zone."""
    start_naive = datetime.combine(day, time(SHIFT_START_HOUR[Shift(shift)]))
    start = timezone.make_aware(start_naive)
    end = timezone.make_aware(start_naive + timedelta(hours=SHIFT_HOURS))
    return start, end


def next_shift(day: Date, shift: str) -> tuple[Date, str]:
    following = NEXT_SHIFT[Shift(shift)]
    return (day + timedelta(days=1) if shift == Shift.NIGHT else day), following.value
