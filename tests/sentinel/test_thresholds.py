import math

from hypothesis import assume, given
from hypothesis import strategies as st

from sentinel.thresholds import NO_BREACH, Thresholds, evaluate_threshold, is_clear

finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False)
maybe = st.one_of(st.none(), finite)


@st.composite
def ordered_thresholds(draw):
    """Well-formed thresholds: low_alert < alert < high_alert < trip, each optional."""
    values = sorted(draw(st.lists(finite, min_size=4, max_size=4, unique=True)))
    keep = draw(st.lists(st.booleans(), min_size=4, max_size=4))
    low, alert, high, trip = (v if k else None for v, k in zip(values, keep, strict=True))
    deadband = draw(st.floats(min_value=0, max_value=10, allow_nan=False))
    return Thresholds(low_alert=low, alert=alert, high_alert=high, trip=trip, deadband=deadband)


def test_p02_vibration_zones():
    t = {"alert": 4.5, "trip": 7.1, "deadband": 0.2}
    assert evaluate_threshold(t, 2.1) == NO_BREACH
    assert evaluate_threshold(t, 4.5) == NO_BREACH  # on the limit is not beyond it
    r = evaluate_threshold(t, 5.0)
    assert (r.breached, r.severity, r.direction, r.threshold_field, r.threshold_value) == (
        True,
        "alert",
        "high",
        "alert",
        4.5,
    )
    r = evaluate_threshold(t, 7.2)
    assert (r.severity, r.threshold_field, r.threshold_value) == ("trip", "trip", 7.1)


def test_low_side_and_double_sided():
    t = {"low_alert": 3.0, "alert": 9.0}
    r = evaluate_threshold(t, 2.5)
    assert (r.breached, r.severity, r.direction, r.threshold_field) == (True, "alert", "low", "low_alert")
    assert evaluate_threshold(t, 9.5).direction == "high"
    assert not evaluate_threshold(t, 5.0).breached


def test_non_finite_never_breaches():
    for value in (math.nan, math.inf, -math.inf):
        assert not evaluate_threshold({"alert": 1.0, "low_alert": 0.0}, value).breached


def test_deadband_example_from_the_domain():
    t = {"alert": 4.5, "trip": 7.1, "deadband": 0.2}
    assert not is_clear(t, 4.4, direction="high")
    assert not is_clear(t, 4.3, direction="high")
    assert is_clear(t, 4.29, direction="high")
    # An escalated trip alarm still needs the alert gone before it clears.
    assert not is_clear(t, 6.0, direction="high")
    low = {"low_alert": 3.0, "deadband": 0.1}
    assert not is_clear(low, 3.05, direction="low")
    assert is_clear(low, 3.11, direction="low")


@given(value=finite)
def test_all_null_never_breaches(value):
    assert evaluate_threshold(Thresholds(), value) == NO_BREACH
    assert (
        evaluate_threshold({"low_alert": None, "alert": None, "high_alert": None, "trip": None}, value).breached
        is False
    )


@given(t=ordered_thresholds(), value=finite)
def test_precedence_trip_high_alert_alert_low(t, value):
    r = evaluate_threshold(t, value)
    if t.trip is not None and value > t.trip:
        expected = ("trip", "trip", "high")
    elif t.high_alert is not None and value > t.high_alert:
        expected = ("high_alert", "alert", "high")
    elif t.alert is not None and value > t.alert:
        expected = ("alert", "alert", "high")
    elif t.low_alert is not None and value < t.low_alert:
        expected = ("low_alert", "alert", "low")
    else:
        assert r == NO_BREACH
        return
    assert r.breached
    assert (r.threshold_field, r.severity, r.direction) == expected
    assert r.threshold_value == getattr(t, expected[0])


@given(low=maybe, alert=maybe, high=maybe, trip=maybe, value=finite)
def test_direction_matches_the_side_crossed_for_any_configuration(low, alert, high, trip, value):
    r = evaluate_threshold(Thresholds(low, alert, high, trip), value)
    if not r.breached:
        # Nothing crossed at all.
        assert all(v is None or value <= v for v in (alert, high, trip))
        assert low is None or value >= low
        return
    if r.direction == "high":
        assert value > r.threshold_value
        assert r.threshold_field in ("alert", "high_alert", "trip")
    else:
        assert value < r.threshold_value and r.threshold_field == "low_alert"
        # The low side only wins when no high limit is crossed.
        assert all(v is None or value <= v for v in (alert, high, trip))
    # Trip always wins when crossed.
    if trip is not None and value > trip:
        assert r.severity == "trip"


@given(t=ordered_thresholds(), value=finite)
def test_clear_and_breach_exclude_each_other(t, value):
    r = evaluate_threshold(t, value)
    if r.breached:
        assert not is_clear(t, value, direction=r.direction)


@given(t=ordered_thresholds(), value=finite, excess=st.floats(min_value=0, max_value=100, allow_nan=False))
def test_deadband_holds_the_alarm(t, value, excess):
    assume(t.alert is not None)
    edge = t.lowest_high
    # Inside the deadband band [edge - deadband, edge]: never clear.
    probe = edge - min(excess, t.deadband)
    assert not is_clear(t, probe, direction="high")
