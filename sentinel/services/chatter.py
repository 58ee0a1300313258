"""Chattering alarms (ISA-18.2 / IEC 62682): a signal whose alarm comes and goes ≥ 3 times a minute.

The remedy is a clear-delay (off-delay) while the signal chatters: when an annunciated alarm
would clear — back inside its band, or swung straight past it to the other side's limit — the
alarms its signal raised in the last `CHATTER_WINDOW_SECONDS` are counted, whichever side they
were on (one query for every signal of the pass). From the `CHATTER_RAISES`-th on, the alarm is
marked `chattering` and does not clear yet: it stays open, so the next crossing raises no new
alarm, until the value has stayed inside its band (deadband included) for
`CHATTER_CLEAR_DELAY_SECONDS`. A crossing back, or a swing to the other side, resets that clock
(`Alarm.clear_since`). Detection records an `AlarmEvent` and an audit record (`alarm.chatter`, through the kernel's
record step, `_common.alarm_record`);
the final clear's event carries `chattering: true`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from core.transitions import Move
from sentinel.choices import AUTO_CLEARABLE_STATES
from sentinel.models import Alarm
from sentinel.services._common import alarm_record

CHATTER_WINDOW_SECONDS = 60
CHATTER_RAISES = 3
CHATTER_CLEAR_DELAY_SECONDS = 60


@dataclass(frozen=True, slots=True)
class ClearCandidate:
    """An open, auto-clearable alarm whose signal is back inside its band."""

    alarm_id: int
    signal_id: int
    state: str
    value: float
    chattering: bool
    clear_since: datetime | None
    swung: bool = False  # past the band to the other side's limit (breaching there), not back in it


@dataclass
class ChatterDecision:
    clears: dict[int, float]  # alarm id → value: clear now
    held: list[int]  # alarms kept open by the clear-delay
    detected: list[int]  # alarms newly found chattering (subset of held)


def _recent_raises(signal_ids: Collection[int], now: datetime) -> Counter[int]:
    since = now - timedelta(seconds=CHATTER_WINDOW_SECONDS)
    rows = Alarm.objects.filter(signal_id__in=list(signal_ids), raised_at__gte=since).values_list("signal_id")
    return Counter(signal_id for (signal_id,) in rows)


def chatter_decide(candidates: Sequence[ClearCandidate], *, now: datetime) -> ChatterDecision:
    """Which candidates clear now and which the clear-delay holds; writes the holds (one UPDATE)
    and the chatter events. A constant number of queries whatever the number of candidates."""
    decision = ChatterDecision(clears={}, held=[], detected=[])
    if not candidates:
        return decision
    fresh = [c for c in candidates if not c.chattering]
    raises = _recent_raises({c.signal_id for c in fresh}, now) if fresh else Counter()
    delay = timedelta(seconds=CHATTER_CLEAR_DELAY_SECONDS)
    start_clock: list[int] = []
    stop_clock: list[int] = []  # held while out of band on the other side: no clear stretch yet
    for c in candidates:
        if c.chattering:
            if c.swung:
                if c.clear_since is not None:
                    stop_clock.append(c.alarm_id)
            elif c.clear_since is not None and now - c.clear_since >= delay:
                decision.clears[c.alarm_id] = c.value
                continue
            elif c.clear_since is None:
                start_clock.append(c.alarm_id)
            decision.held.append(c.alarm_id)
        elif raises[c.signal_id] >= CHATTER_RAISES:
            (stop_clock if c.swung else start_clock).append(c.alarm_id)
            decision.held.append(c.alarm_id)
            decision.detected.append(c.alarm_id)
        else:
            decision.clears[c.alarm_id] = c.value
    if start_clock:
        Alarm.objects.filter(pk__in=start_clock, state__in=AUTO_CLEARABLE_STATES).update(
            chattering=True, clear_since=now
        )
    if stop_clock:
        Alarm.objects.filter(pk__in=stop_clock, state__in=AUTO_CLEARABLE_STATES).update(
            chattering=True, clear_since=None
        )
    if decision.detected:
        by_id = {c.alarm_id: c for c in candidates}
        alarm_record(
            [
                Move(
                    Alarm(pk=pk, signal_id=by_id[pk].signal_id),
                    by_id[pk].state,
                    by_id[pk].state,
                    {
                        "chattering": True,
                        "swung": by_id[pk].swung,
                        "raises_in_window": raises[by_id[pk].signal_id],
                        "window_seconds": CHATTER_WINDOW_SECONDS,
                        "clear_delay_seconds": CHATTER_CLEAR_DELAY_SECONDS,
                        "value": by_id[pk].value,
                    },
                )
                for pk in decision.detected
            ],
            action="chatter",
            comment="chattering: clear delayed",
        )
    return decision


def chatter_reset_clock(alarm_ids: Collection[int]) -> None:
    """The value crossed back while the clear-delay ran: it starts again at the next clear value."""
    if alarm_ids:
        Alarm.objects.filter(pk__in=list(alarm_ids)).update(clear_since=None)
