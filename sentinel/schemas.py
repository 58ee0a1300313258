"""API schemas (ninja) and the serialisers that fill them."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from ninja import Schema
from pydantic import AfterValidator, Field, StrictBool
from pydantic_core import PydanticCustomError

from core.json_types import whole_number
from sentinel.models import Alarm, AlarmEvent, SignalDefinition, SignalLatest
from sentinel.services.alarms import REASON_PATTERN, has_visible_character


class ThresholdsOut(Schema):
    low_alert: float | None
    alert: float | None
    high_alert: float | None
    trip: float | None
    deadband: float
    on_delay_seconds: int


class SignalOut(Schema):
    id: int
    cell_id: int
    key: str
    display_name: str
    unit: str
    enabled: bool
    thresholds: ThresholdsOut
    value: float | None
    time: datetime | None
    stale: bool


class CellOut(Schema):
    id: int
    tag: str
    name: str
    equipment_type: str
    line: str
    site: str
    onboarding_complete: bool
    active_alarm_count: int
    open_alarm_count: int
    signals: list[SignalOut]


class AlarmOut(Schema):
    id: int
    signal_id: int
    signal_key: str
    signal_name: str
    unit: str
    cell_id: int
    cell_tag: str
    state: str
    severity: str
    direction: str
    threshold_field: str
    threshold_value: float
    value: float
    peak_value: float
    raised_at: datetime
    acknowledged_at: datetime | None
    acknowledged_by: str | None
    acknowledge_comment: str
    shelved_until: datetime | None
    shelved_until_work_order_closes: bool
    cleared_at: datetime | None
    chattering: bool
    # The signal stopped reporting: the alarm stands as it was (it cannot clear or escalate on a
    # value that is not fresh); `signal_time` is its last sample.
    signal_stale: bool
    signal_time: datetime | None


class AlarmEventOut(Schema):
    id: int
    from_state: str
    to_state: str
    actor: str | None
    comment: str
    details: dict[str, Any]
    created_at: datetime


class AlarmDetailOut(AlarmOut):
    events: list[AlarmEventOut]  # the newest 200 (sentinel.api.MAX_DETAIL_EVENTS), oldest first
    events_total: int


class CommentIn(Schema):
    comment: str = Field("", max_length=500)


# A reason to hide an alarm: at least one visible character (not whitespace, \x1c-\x1f or a zero-width
# one: sentinel.services.alarms.REASON_PATTERN), at most the AlarmEvent comment's 500. The service
# checks the same rule.


def _has_visible_character(value: str) -> str:
    # The schema states the pattern (for clients); a refusal says it in words, not as the regex.
    if not has_visible_character(value):
        raise PydanticCustomError(
            "blank_reason", "must give a reason: only spaces, control or invisible characters were sent"
        )
    return value


Reason = Annotated[str, AfterValidator(_has_visible_character)]


def reason_field(what: str) -> Any:
    return Field(
        min_length=1,
        max_length=500,
        json_schema_extra={"pattern": REASON_PATTERN},
        description=f"Why the alarm is {what} (required; recorded on the alarm event and the audit record).",
    )


class ReasonIn(Schema):
    comment: Reason = reason_field("put out of service")


class ShelveIn(Schema):
    # true or "30" is a 422; the bounds sit on the number itself, so the schema states them too
    minutes: whole_number(ge=1, le=7 * 24 * 60) | None = None  # type: ignore[valid-type]
    until_work_order_closes: StrictBool = Field(  # "yes" or 1 is a 422, not a shelve
        False, description="Shelved until the alarm's work order closes, and at most 7 days (the longest shelve)."
    )
    comment: Reason = reason_field("shelved")


class OutOfOrderOut(Schema):
    count: int
    indices: list[int]


class IngestOut(Schema):
    accepted: int
    signals: int
    raised: list[int]
    escalated: list[int]
    cleared: list[int]
    out_of_order: OutOfOrderOut
    duplicates: int = 0


def thresholds_out(signal: SignalDefinition) -> dict[str, Any]:
    return {
        "low_alert": signal.low_alert,
        "alert": signal.alert,
        "high_alert": signal.high_alert,
        "trip": signal.trip,
        "deadband": signal.deadband,
        "on_delay_seconds": signal.on_delay_seconds,
    }


def signal_out(signal: SignalDefinition, latest: SignalLatest | None = None) -> dict[str, Any]:
    if latest is None:
        latest = getattr(signal, "latest", None)  # the reverse one-to-one raises an AttributeError when absent
    return {
        "id": signal.pk,
        "cell_id": signal.cell_id,
        "key": signal.key,
        "display_name": signal.display_name,
        "unit": signal.unit,
        "enabled": signal.enabled,
        "thresholds": thresholds_out(signal),
        "value": latest.value if latest else None,
        "time": latest.time if latest else None,
        "stale": bool(latest and latest.stale),
    }


def alarm_out(alarm: Alarm) -> dict[str, Any]:
    signal = alarm.signal
    latest = getattr(signal, "latest", None)  # selectors load it with the alarm (no query per row)
    return {
        "id": alarm.pk,
        "signal_id": signal.pk,
        "signal_key": signal.key,
        "signal_name": signal.display_name,
        "unit": signal.unit,
        "cell_id": signal.cell_id,
        "cell_tag": signal.cell.tag,
        "state": alarm.state,
        "severity": alarm.severity,
        "direction": alarm.direction,
        "threshold_field": alarm.threshold_field,
        "threshold_value": alarm.threshold_value,
        "value": alarm.value,
        "peak_value": alarm.peak_value,
        "raised_at": alarm.raised_at,
        "acknowledged_at": alarm.acknowledged_at,
        "acknowledged_by": alarm.acknowledged_by.get_username() if alarm.acknowledged_by else None,
        "acknowledge_comment": alarm.acknowledge_comment,
        "shelved_until": alarm.shelved_until,
        "shelved_until_work_order_closes": alarm.shelved_until_work_order_closes,
        "cleared_at": alarm.cleared_at,
        "chattering": alarm.chattering,
        "signal_stale": bool(latest and latest.stale),
        "signal_time": latest.time if latest else None,
    }


def alarm_event_out(event: AlarmEvent) -> dict[str, Any]:
    return {
        "id": event.pk,
        "from_state": event.from_state,
        "to_state": event.to_state,
        "actor": event.actor.get_username() if event.actor else None,
        "comment": event.comment,
        "details": event.details,
        "created_at": event.created_at,
    }
