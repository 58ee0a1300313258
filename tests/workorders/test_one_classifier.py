"""One threshold classifier and one trend selector (issue 14, item 1).

The Control Room's signal state, the agents' tools (get_current_signals, get_signal_trends,
signal_features) and Sentinel's alarm detection all classify a value with
`sentinel.thresholds.evaluate_threshold`; on the limit is normal, strictly beyond it breaches.
"""

from __future__ import annotations

import math
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.capabilities import CapabilityContext, dispatch
from sentinel import selectors as sentinel_selectors
from sentinel.models import Alarm, SignalDefinition, SignalLatest, SignalSample
from sentinel.services import samples_ingest
from sentinel.thresholds import THRESHOLD_FIELDS, evaluate_threshold, signal_state
from tests.workorders import factories as f
from workorders.agents.diagnosis_features import cell_features
from workorders.views import control_room_snapshot

pytestmark = pytest.mark.django_db

EPS = 1e-9


def _call(user, name: str, **params):
    result = dispatch(f"workorders.{name}", params, ctx=CapabilityContext(user=user))
    assert not result.is_error, result.message
    return result.content


def _expected(limits: dict[str, float | None], value: float) -> str:
    """Sentinel's verdict, as the detector reaches it, in the Control Room's words."""
    breach = evaluate_threshold(limits, value)
    if not breach.breached:
        return "normal"
    return "low" if breach.direction == "low" else str(breach.severity)


@st.composite
def limit_sets(draw) -> dict[str, float | None]:
    """Well-ordered limits (low_alert < alert < high_alert < trip), each optional, at least one."""
    values = sorted(draw(st.lists(st.integers(-2000, 2000), min_size=4, max_size=4, unique=True)))
    keep = draw(st.lists(st.booleans(), min_size=4, max_size=4).filter(any))
    return {
        name: (v / 4 if k else None)
        for name, v, k in zip(("low_alert", "alert", "high_alert", "trip"), values, keep, strict=True)
    }


def _probes(limits: dict[str, float | None]) -> list[float]:
    """Every limit, and a hair either side of it."""
    out = []
    for limit in (v for v in limits.values() if v is not None):
        step = max(EPS, abs(limit) * 1e-12)
        out += [limit - step, limit, limit + step, math.nextafter(limit, -math.inf), math.nextafter(limit, math.inf)]
    return out


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(limits=limit_sets(), pick=st.data())
def test_control_room_tools_and_sentinel_agree_around_every_limit(operator, limits, pick):
    cell = f.make_cell("P-02")
    signal, _ = SignalDefinition.objects.update_or_create(
        cell=cell, key="prop_signal", defaults={"display_name": "Probe", "unit": "u", "deadband": 0.0, **limits}
    )
    value = pick.draw(st.sampled_from(_probes(limits)))
    SignalLatest.objects.update_or_create(signal=signal, defaults={"time": timezone.now(), "value": value})
    expected = _expected(limits, value)

    assert signal_state(signal, value) == expected
    room = control_room_snapshot()
    row = next(s for c in room["cells"] for s in c["signals"] if s["id"] == signal.pk)
    assert row["state"] == expected
    assert row["thresholds"] == {name: limits[name] for name in THRESHOLD_FIELDS}
    tool = _call(operator, "get_current_signals", cell_id=cell.pk)
    assert next(s for s in tool["signals"] if s["signal_def_id"] == signal.pk)["state"] == expected
    beyond = cell_features({"prop_signal": [(float(t), value) for t in range(30)]}, {"prop_signal": limits})
    assert beyond["signals"]["prop_signal"]["beyond_limit"] == (
        None if expected == "normal" else ("low" if expected == "low" else "high")
    )


def test_p02_bearing_temperature_on_and_beyond_its_limits(operator):
    """The issue's example: alert 80, trip 95. On a limit nothing is raised and every reader says
    so; just beyond it Sentinel raises the alarm and every reader agrees on its severity."""
    cell = f.make_cell("P-02")
    bearing = f.make_signal(cell, "bearing_temp_c", display_name="Bearing", unit="°C", alert=80.0, trip=95.0)
    at = timezone.now()
    seen = []
    for i, (value, state) in enumerate([(80.0, "normal"), (80.01, "alert"), (95.0, "alert"), (95.01, "trip")]):
        t = at + timedelta(seconds=i)
        samples_ingest(samples=[{"signal_id": bearing.pk, "time": t.isoformat(), "value": value}], now=t)
        alarm = Alarm.objects.filter(signal=bearing).order_by("-pk").first()
        raised = alarm.severity if alarm is not None else "normal"
        room = control_room_snapshot()
        row = next(s for c in room["cells"] for s in c["signals"] if s["id"] == bearing.pk)
        tool = _call(operator, "get_current_signals", cell_id=cell.pk)
        current = next(s for s in tool["signals"] if s["key"] == "bearing_temp_c")
        seen.append((value, raised, row["state"], current["state"]))
        assert (raised, row["state"], current["state"]) == (state, state, state), seen


def test_the_trend_tool_breach_window_counts_only_samples_beyond_the_limit(operator):
    cell = f.make_cell("P-02")
    signal = f.make_signal(cell, "bearing_temp_c", alert=80.0, trip=95.0)
    now = timezone.now()
    values = [70.0, 80.0, 80.0, 81.0, 82.0, 80.0]  # on the limit twice, beyond it twice
    SignalSample.objects.bulk_create(
        SignalSample(signal=signal, time=now - timedelta(minutes=len(values) - i), value=v)
        for i, v in enumerate(values)
    )
    trend = _call(operator, "get_signal_trends", signal_def_ids=[signal.pk], minutes=30, buckets=6)["signals"][0]
    assert trend["breach"]["samples"] == 2 and trend["breach"]["direction"] == "high"
    assert trend["peak"] == 82.0 and trend["low"] == 70.0


def test_a_low_breach_of_a_double_sided_signal_is_reported(operator):
    cell = f.make_cell("P-02")
    pressure = f.make_signal(cell, "discharge_pressure_bar", low_alert=3.0, alert=9.0, trip=None)
    now = timezone.now()
    SignalSample.objects.bulk_create(
        SignalSample(signal=pressure, time=now - timedelta(minutes=5 - i), value=v)
        for i, v in enumerate([6.0, 3.0, 2.5, 2.4])
    )
    trend = _call(operator, "get_signal_trends", signal_def_ids=[pressure.pk], minutes=30, buckets=3)["signals"][0]
    assert (trend["breach"]["direction"], trend["breach"]["samples"]) == ("low", 2)


@pytest.mark.usefixtures("steady_registry")
@pytest.mark.parametrize("signal_count", [1, 3])
def test_trends_take_the_same_queries_for_24_and_60_buckets(signal_count):
    cell = f.make_cell("P-02")
    signals = [f.make_signal(cell, f"s{i}") for i in range(signal_count)]
    for signal in signals:
        f.ramp(signal, minutes=120)
    counts = {}
    for buckets in (24, 60):
        with CaptureQueriesContext(connection) as queries:
            result = sentinel_selectors.trends(signals, minutes=240, buckets=buckets)
        counts[buckets] = len(queries)
        assert [len(t["buckets"]) for t in result] == [buckets] * signal_count
        assert all(sum(b["n"] for b in t["buckets"]) == 120 for t in result)
    assert counts[24] == counts[60] <= 3  # at 4 h: dirty minutes, buckets, breaches


def test_the_tool_and_the_api_read_the_same_buckets():
    cell = f.make_cell("P-02")
    signal = f.make_signal(cell)
    f.ramp(signal)
    end = timezone.now() + timedelta(seconds=1)
    api = sentinel_selectors.signal_trends(signal=signal, minutes=60, buckets=12, end=end)
    shared = sentinel_selectors.trends([signal], minutes=60, buckets=12, end=end)[0]
    assert [p["count"] for p in api["points"]] == [b["n"] for b in shared["buckets"]]
    assert [p["max"] for p in api["points"]] == [b["max"] for b in shared["buckets"]]
    assert sum(p["count"] for p in api["points"]) == 60
