"""Threshold evaluation: pure functions, no database.

High side: `alert` < `high_alert` < `trip` (each optional); low side: `low_alert`. A value breaches
a high threshold when it is strictly above it and the low one when strictly below it. Precedence
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
