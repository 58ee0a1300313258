"""Alarm-performance metrics on hand-built alarm histories (sentinel.performance): floods, rates,
chattering, fleeting, standing/stale, shelved/out of service, bad actors, priority mix, tuning
suggestions, and a query count that does not grow with the number of alarms."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from core.errors import InvalidInput, NotFound
from sentinel.alarm_rates import floods_find, max_raises_within, rate_buckets
from sentinel.alarm_tuning import measure_phrase, nice_ceil, number
from sentinel.choices import AlarmState, Direction, Severity
from sentinel.models import Alarm, SignalDefinition, SignalSample
from sentinel.performance import alarm_performance, performance_window
from tests.sentinel.factories import make_cell, make_signal

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
T0 = NOW - timedelta(hours=2)  # the window's first hour holds the histories below


def at(minutes: float = 0, seconds: float = 0) -> datetime:
    return T0 + timedelta(minutes=minutes, seconds=seconds)


def alarm(
    signal: SignalDefinition,
    raised_at: datetime,
    cleared_after: float | None = 30.0,
    *,
    state: str | None = None,
    field: str = "alert",
    peak: float | None = None,
    chattering: bool = False,
) -> Alarm:
    limit = getattr(signal, field)
    return Alarm.objects.create(
        signal=signal,
        state=state or (AlarmState.CLEARED if cleared_after is not None else AlarmState.ACTIVE_UNACK),
        severity=Severity.TRIP if field == "trip" else Severity.ALERT,
        direction=Direction.LOW if field == "low_alert" else Direction.HIGH,
        threshold_field=field,
        threshold_value=limit,
        value=peak if peak is not None else limit,
        peak_value=peak if peak is not None else limit,
        raised_at=raised_at,
        cleared_at=raised_at + timedelta(seconds=cleared_after) if cleared_after is not None else None,
        chattering=chattering,
    )


def report(**window) -> dict:
    return alarm_performance(performance_window(end=NOW, hours=window.pop("hours", 2), now=NOW, **window), now=NOW)


# --- floods and rates (pure) ------------------------------------------------------------------


def test_a_flood_starts_above_10_in_10_minutes_and_ends_below_5():
    # Given 11 alarms one every 30 s from 10:00, then one alarm every 3 minutes
    burst = [at(seconds=30 * i) for i in range(11)]
    tail = [at(minutes=5 + 3 * i) for i in range(1, 6)]
    floods = floods_find(burst + tail, until=NOW)
    assert len(floods) == 1
    flood = floods[0]
    # it starts at the first of the 11 (the 11th arrives at +5 min) and peaks at 12 when the tail's
    # first alarm (+8 min) joins the burst's 11 in one 10-minute stretch
    assert flood["start"] == at().isoformat()
    assert flood["peak"] == 12 and flood["peak_at"] == at(minutes=8).isoformat()
    # it ends at the first moment fewer than 5 alarms arrived in the 10 minutes before
    end = datetime.fromisoformat(flood["end"])
    remaining = [t for t in burst + tail if end - timedelta(minutes=10) < t <= end]
    assert len(remaining) == 4
    before = end - timedelta(seconds=1)
    assert len([t for t in burst + tail if before - timedelta(minutes=10) < t <= before]) >= 5
    assert flood["alarms"] == len([t for t in burst + tail if at() <= t <= end])
    assert not flood["ongoing"]


def test_ten_in_10_minutes_is_not_a_flood_and_an_unfinished_one_is_ongoing():
    assert floods_find([at(seconds=50 * i) for i in range(10)], until=NOW) == []
    floods = floods_find([at(seconds=10 * i) for i in range(12)], until=at(seconds=200))
    assert len(floods) == 1 and floods[0]["ongoing"] and floods[0]["end"] is None


def test_rate_buckets_sit_on_the_clock():
    times = [at(minutes=1), at(minutes=9, seconds=59), at(minutes=10), at(minutes=25)]
    buckets = rate_buckets(times, at(minutes=-3), at(minutes=30))
    assert [b["start"] for b in buckets][:2] == [at(minutes=-10).isoformat(), at().isoformat()]
    assert [b["count"] for b in buckets] == [0, 2, 1, 1]


def test_max_raises_within_a_minute():
    assert max_raises_within([at(seconds=s) for s in (0, 20, 40, 100)], 60) == 3
    assert max_raises_within([at(seconds=s) for s in (0, 35, 70, 105)], 60) == 2


# --- the report on a hand-built history ---------------------------------------------------------


@pytest.fixture
def plant(db):
    cell = make_cell("P-02")
    return {
        "vibration": make_signal(cell, "vibration_mm_s", alert=4.5, trip=7.1, deadband=0.2),
        "current": make_signal(cell, "motor_current_a", unit="A", alert=52.0, trip=60.0, deadband=0.5),
        "pressure": make_signal(
            cell, "discharge_pressure_bar", unit="bar", low_alert=3.0, alert=8.5, deadband=0.1, trip=None
        ),
        "temperature": make_signal(cell, "bearing_temp_c", unit="°C", alert=80.0, trip=95.0, deadband=1.0),
        "speed": make_signal(make_cell("CV-03"), "belt_speed_m_s", unit="m/s", low_alert=1.2, alert=2.2, trip=None),
    }


def test_chattering_fleeting_standing_stale_shelved_and_out_of_service(plant):
    vib, cur, prs, tmp, spd = (plant[k] for k in ("vibration", "current", "pressure", "temperature", "speed"))
    # chattering: 3 raises of the vibration within 40 s; the third held by the clear-delay (flagged)
    for s in (0, 20):
        alarm(vib, at(seconds=s), cleared_after=8)
    alarm(vib, at(seconds=40), cleared_after=120, chattering=True)
    # fleeting: motor current cleared after 2 s and 4 s; one after 9 s is not fleeting
    for minute, seconds in ((10, 2), (20, 4), (30, 9)):
        alarm(cur, at(minutes=minute), cleared_after=seconds)
    # standing: temperature active for 30 h (stale) and pressure acknowledged for 3 h (not stale)
    alarm(tmp, NOW - timedelta(hours=30), cleared_after=None, state=AlarmState.ACKNOWLEDGED)
    alarm(prs, NOW - timedelta(hours=3), cleared_after=None, field="low_alert", peak=2.9)
    alarm(spd, at(minutes=50), cleared_after=None, state=AlarmState.SHELVED, field="low_alert", peak=1.1)

    r = report()
    assert {(c["signal_key"], c["max_in_60s"], c["flagged"]) for c in r["chattering"]["items"]} == {
        ("vibration_mm_s", 3, True)
    }
    assert sorted(f["seconds"] for f in r["fleeting"]["items"]) == [2.0, 4.0]
    standing = {s["signal_key"]: s for s in r["standing"]["items"]}
    assert set(standing) == {"bearing_temp_c", "discharge_pressure_bar"}
    assert standing["bearing_temp_c"]["stale"] and not standing["discharge_pressure_bar"]["stale"]
    assert [s["signal_key"] for s in r["stale"]["items"]] == ["bearing_temp_c"]
    assert [s["signal_key"] for s in r["shelved"]["items"]] == ["belt_speed_m_s"]
    assert r["out_of_service"]["count"] == 0
    # the two standing alarms were raised before the window: they are not counted in its rate
    assert r["rate"]["total"] == 7


def test_bad_actors_share_priority_mix_and_rate(plant):
    vib, cur, tmp = plant["vibration"], plant["current"], plant["temperature"]
    for i in range(6):
        alarm(cur, at(minutes=i * 7))
    for i in range(3):
        alarm(vib, at(minutes=3 + i * 11))
    alarm(tmp, at(minutes=70), field="trip")
    r = report()
    assert [(b["signal_key"], b["count"], b["share_percent"]) for b in r["bad_actors"]] == [
        ("motor_current_a", 6, 60.0),
        ("vibration_mm_s", 3, 30.0),
        ("bearing_temp_c", 1, 10.0),
    ]
    assert r["top10_share_percent"] == 100.0
    assert r["priority_mix"]["high"] == {"count": 1, "percent": 10.0, "target_percent": 5}
    assert r["priority_mix"]["low"]["count"] == 9
    assert r["rate"]["total"] == 10 and r["rate"]["average_per_10_min"] == pytest.approx(10 / 12, abs=0.01)
    assert r["rate"]["verdict"] == "acceptable" and r["floods"] == []
    assert r["window"]["position"]["kind"] == "site"


def test_a_line_is_an_operator_position(plant):
    alarm(plant["current"], at(minutes=1))
    alarm(plant["speed"], at(minutes=2), field="low_alert", peak=1.1)
    line_id = plant["speed"].cell.line_id
    # the factory puts both cells on one line; move the conveyor to its own line
    from sentinel.models import Line

    other = Line.objects.create(site=plant["speed"].cell.line.site, name="Line 2")
    plant["speed"].cell.line = other
    plant["speed"].cell.save(update_fields=["line"])
    r = report(line_id=other.pk)
    assert r["window"]["position"] == {"kind": "line", "line_id": other.pk, "name": "Line 2"}
    assert [b["signal_key"] for b in r["bad_actors"]] == ["belt_speed_m_s"]
    site = report()
    assert {(p["line_id"], p["total"]) for p in site["positions"]} == {(line_id, 1), (other.pk, 1)}
    with pytest.raises(NotFound) as refused:
        report(line_id=other.pk + 100)
    assert refused.value.field == "line_id"


# --- tuning suggestions ----------------------------------------------------------------------------


def _samples(signal: SignalDefinition, values: list[float], start: datetime) -> None:
    SignalSample.objects.bulk_create(
        SignalSample(signal=signal, time=start + timedelta(seconds=i), value=v) for i, v in enumerate(values)
    )


def test_suggestions_deadband_for_chatter_on_delay_for_fleeting_limit_for_standing(plant):
    vib, cur, prs = plant["vibration"], plant["current"], plant["pressure"]
    # vibration chatters; its noise: ±0.15 around 4.45 (σ = 0.15)
    for s in (0, 15, 30):
        alarm(vib, at(seconds=s), cleared_after=5, chattering=s == 30)
    _samples(vib, [4.45 + (0.15 if i % 2 else -0.15) for i in range(600)], at())
    # motor current: 4 fleeting alarms (≤ 3 s)
    for minute in (5, 15, 25, 35):
        alarm(cur, at(minutes=minute), cleared_after=3)
    # discharge pressure: low alarm standing 3 h, worst value 2.95 against the 3.0 limit (1.7 % past it)
    alarm(prs, NOW - timedelta(hours=3), cleared_after=None, field="low_alert", peak=2.95)
    r = report(hours=4)
    by_key = {b["signal_key"]: b["suggestion"] for b in r["bad_actors"]}
    deadband = by_key["vibration_mm_s"]
    assert deadband["field"] == "deadband" and deadband["current"] == 0.2
    assert deadband["value"] == pytest.approx(0.45)  # 3 σ (σ = 0.15 in every minute of samples)
    assert "σ = 0.15 mm/s" in deadband["evidence"][1]
    assert deadband["plan"]["goal"].startswith("Set the P-02 vibration deadband to 0.45 because ")
    on_delay = by_key["motor_current_a"]
    assert (on_delay["field"], on_delay["value"]) == ("on_delay_seconds", 10)
    assert "4 of 4 alarms cleared within 5 s (longest 3 s)" in on_delay["evidence"][0]
    assert on_delay["plan"]["goal"].startswith("Set the P-02 motor current on-delay to 10 because ")
    limit = by_key["discharge_pressure_bar"]
    assert (limit["field"], limit["current"]) == ("low_alert", 3.0)
    assert limit["value"] < 2.95
    assert limit["plan"]["goal"].startswith(
        f"Lower the P-02 discharge pressure low alert limit to {number(limit['value'])}"
    )
    assert limit["plan"]["context_refs"] == [f"cell:{prs.cell_id}"]


def test_no_limit_suggestion_far_from_the_limit_or_past_the_next_limit(plant):
    vib = plant["vibration"]
    alarm(vib, NOW - timedelta(hours=3), cleared_after=None, peak=5.5)  # 22 % past the alert: a real excursion
    assert report(hours=4)["bad_actors"][0]["suggestion"] is None
    SignalDefinition.objects.filter(pk=vib.pk).update(trip=4.6)
    Alarm.objects.all().delete()
    alarm(vib, NOW - timedelta(hours=3), cleared_after=None, peak=4.55)  # moving past it would reach the trip
    assert report(hours=4)["bad_actors"][0]["suggestion"] is None


def test_a_signal_the_planner_cannot_name_gets_the_suggestion_without_a_plan(plant):
    speed = plant["speed"]
    for minute in (5, 15, 25):
        alarm(speed, at(minutes=minute), cleared_after=2, field="low_alert", peak=1.1)
    suggestion = report()["bad_actors"][0]["suggestion"]
    assert suggestion["field"] == "on_delay_seconds" and suggestion["plan"] is None
    assert "belt_speed_m_s" in suggestion["plan_unavailable"]


def test_wording_helpers():
    assert measure_phrase("discharge_pressure_bar") == "discharge pressure"
    assert measure_phrase("bearing_temp_c") == "bearing temperature"
    assert measure_phrase("flow_m3_h") == "flow"
    assert measure_phrase("belt_speed_m_s") is None
    assert measure_phrase("pressure_flow_ratio") is None  # two quantities: the planner would refuse it
    assert measure_phrase("high_alarm_trip_pressure") == "pressure"  # the planner's own words are left out
    assert nice_ceil(0.183) == 0.19 and nice_ceil(4.62) == 4.7 and nice_ceil(0.0) == 0.0
    assert number(0.00001) == "0.00001" and number(5.0) == "5"


# --- queries and window bounds ----------------------------------------------------------------------


@pytest.mark.parametrize("n", [5, 60])
def test_the_query_count_does_not_grow_with_the_alarms(plant, n, django_assert_max_num_queries):
    signals = list(plant.values())
    for i in range(n):
        alarm(signals[i % len(signals)], at(seconds=20 * i), cleared_after=3, chattering=i % 7 == 0,
              field="low_alert" if signals[i % len(signals)].alert is None else "alert")  # fmt: skip
    alarm(plant["temperature"], NOW - timedelta(hours=30), cleared_after=None)
    with django_assert_max_num_queries(4):
        r = report()
    assert r["rate"]["total"] == n and len(r["bad_actors"]) == len(signals)


@pytest.mark.parametrize(
    ("bounds", "field"),
    [
        ({"start": NOW, "end": NOW}, "start"),
        ({"start": NOW - timedelta(days=32), "end": NOW}, "start"),
        ({"hours": 0}, "hours"),
        ({"hours": 745}, "hours"),
        ({"hours": 2, "start": NOW - timedelta(hours=1)}, "hours"),
        ({"end": NOW + timedelta(hours=1)}, "end"),
        ({"line_id": 0}, "line_id"),
        ({"end": datetime(1, 1, 1, tzinfo=UTC)}, "end"),
        ({"start": datetime(1, 1, 1, tzinfo=UTC), "end": datetime(1, 1, 2, tzinfo=UTC)}, "start"),
    ],
)
def test_bad_window_bounds_name_the_field(bounds, field):
    with pytest.raises(InvalidInput) as refused:
        performance_window(now=NOW, **bounds)
    assert refused.value.field == field


def test_naive_datetimes_are_utc():
    window = performance_window(start=datetime(2026, 3, 2, 10, 0), end=datetime(2026, 3, 2, 11, 0), now=NOW)
    assert window.start == datetime(2026, 3, 2, 10, 0, tzinfo=UTC) and window.end.tzinfo is not None
