"""Threshold evaluation: pure functions, no database. The one classifier of a value against a
signal's limits: the alarm detector, the Control Room, the agents' tools and the API all use it.

High side: `alert` < `high_alert` < `trip` (each optional); low side: `low_alert`. A value breaches
a high threshold when it is strictly above it and the low one when strictly below it (ISA-18.2:
the alarm is raised when the value *exceeds* its limit; on the limit is still normal). Precedence
is trip > high_alert > alert > low_alert, so a misconfigured signal still reports its worst breach.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sentinel.choices import Direction, Severity

THRESHOLD_FIELDS = ("low_alert", "alert", "high_alert", "trip")
# Checked in this order; the first breached one wins.
_HIGH_SIDE = (("trip", Severity.TRIP), ("high_alert", Severity.ALERT), ("alert", Severity.ALERT))


@dataclass(frozen=True, slots=True)
class Thresholds:
    low_alert: float | None = None
    alert: float | None = None
    high_alert: float | None = None
    trip: float | None = None
    deadband: float = 0.0

    @classmethod
    def of(cls, source: Any) -> Thresholds:
        """From a SignalDefinition, a mapping, or a Thresholds."""
        if isinstance(source, Thresholds):
            return source
        get = source.get if isinstance(source, Mapping) else lambda name, default=None: getattr(source, name, default)
        return cls(
            low_alert=get("low_alert"),
            alert=get("alert"),
            high_alert=get("high_alert"),
            trip=get("trip"),
            deadband=get("deadband") or 0.0,
        )

    @property
    def lowest_high(self) -> float | None:
        """The first high-side limit a rising value meets (the edge of the normal band)."""
        values = [v for v in (self.alert, self.high_alert, self.trip) if v is not None]
        return min(values) if values else None


@dataclass(frozen=True, slots=True)
class BreachResult:
    breached: bool
    severity: str | None = None  # Severity.ALERT | Severity.TRIP
    direction: str | None = None  # Direction.HIGH | Direction.LOW
    threshold_field: str | None = None
    threshold_value: float | None = None


NO_BREACH = BreachResult(breached=False)


def evaluate_threshold(signal_or_thresholds: Any, value: float) -> BreachResult:
    """The worst threshold `value` breaches, or NO_BREACH. Non-finite values never breach."""
    if value is None or not math.isfinite(value):
        return NO_BREACH
    t = Thresholds.of(signal_or_thresholds)
    for field, severity in _HIGH_SIDE:
        limit = getattr(t, field)
        if limit is not None and value > limit:
            return BreachResult(True, severity, Direction.HIGH, field, limit)
    if t.low_alert is not None and value < t.low_alert:
        return BreachResult(True, Severity.ALERT, Direction.LOW, "low_alert", t.low_alert)
    return NO_BREACH


class SignalState:
    """What a page or a tool shows for a value: `signal_state()`'s answers."""

    NORMAL = "normal"
    ALERT = "alert"  # beyond alert or high_alert
    TRIP = "trip"
    LOW = "low"  # below low_alert
    UNKNOWN = "unknown"  # no value (or not a finite one)


def signal_state(signal_or_thresholds: Any, value: float | None) -> str:
    """normal | alert | trip | low | unknown: `evaluate_threshold` in one word."""
    if value is None or not math.isfinite(value):
        return SignalState.UNKNOWN
    breach = evaluate_threshold(signal_or_thresholds, value)
    if not breach.breached:
        return SignalState.NORMAL
    if breach.direction == Direction.LOW:
        return SignalState.LOW
    return SignalState.TRIP if breach.severity == Severity.TRIP else SignalState.ALERT


def threshold_values(signal_or_thresholds: Any) -> dict[str, float | None]:
    """The four limits as a JSON-ready mapping (what pages and tools show next to a value)."""
    t = Thresholds.of(signal_or_thresholds)
    return {name: getattr(t, name) for name in THRESHOLD_FIELDS}


def is_clear(signal_or_thresholds: Any, value: float, *, direction: str) -> bool:
    """True when an alarm on `direction` may clear: the value is back inside the normal band by
    at least the deadband (an alarm at 4.5 with deadband 0.2 clears only below 4.3).

    The band edge is the lowest high-side limit (so an escalated trip alarm clears only when the
    alert is gone too), or `low_alert` on the low side. A side without limits is always clear.
    """
    if value is None or not math.isfinite(value):
        return False
    t = Thresholds.of(signal_or_thresholds)
    deadband = abs(t.deadband or 0.0)
    if direction == Direction.LOW:
        return t.low_alert is None or value > t.low_alert + deadband
    edge = t.lowest_high
    return edge is None or value < edge - deadband


# Pairs that must be strictly increasing where both are set (the high side, then low < high side).
_ORDERED = (("alert", "high_alert"), ("alert", "trip"), ("high_alert", "trip"))


def limits_problem(t: Thresholds, *, changed: frozenset[str] | set[str] = frozenset()) -> tuple[str, str] | None:
    """The first inconsistency of a limit set as `(field, message)`, or None when it is sound.

    Rules: deadband ≥ 0; `alert` < `high_alert` < `trip` where set; `low_alert` below the lowest
    high-side limit, with room for the deadband on both sides (else an alarm could never clear
    inside the band); at least one limit. A violated pair is reported on the field being
    `changed` (the one a person can fix), else on the lower one.
    """
    values = {"low_alert": t.low_alert, "alert": t.alert, "high_alert": t.high_alert, "trip": t.trip}
    for name, value in (*values.items(), ("deadband", t.deadband)):
        if value is not None and not math.isfinite(value):
            return name, f"{name}: must be a finite number."
    if t.deadband is None or t.deadband < 0:
        return "deadband", f"deadband: must be 0 or more (got {t.deadband})."
    if all(v is None for v in values.values()):
        return "alert", "alert: a signal needs at least one limit."
    edge = t.lowest_high
    edge_name = next((n for n in ("alert", "high_alert", "trip") if values[n] is not None and values[n] == edge), "")
    pairs = [*_ORDERED, ("low_alert", edge_name)] if edge_name else list(_ORDERED)
    for low, high in pairs:
        lo, hi = values[low], values[high]
        if lo is None or hi is None or lo < hi:
            continue
        if high in changed and low not in changed:
            return high, f"{high}: {hi:g} must be above {low} ({lo:g})."
        return low, f"{low}: {lo:g} must be below {high} ({hi:g})."
    if t.low_alert is not None and edge is not None and t.low_alert + t.deadband >= edge - t.deadband:
        return "deadband", (
            f"deadband: {t.deadband:g} leaves no normal band between low_alert ({t.low_alert:g}) and "
            f"{edge_name} ({edge:g}); an alarm could never clear."
        )
    return None
