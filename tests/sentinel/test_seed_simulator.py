import io
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from sentinel import seed
from sentinel.models import Alarm, Cell, SignalDefinition, SignalLatest, SignalSample
from sentinel.selectors import signal_trends
from sentinel.services import sentinel_scan
from sentinel.simulator import Simulator

pytestmark = pytest.mark.django_db


def test_seed_builds_the_demo_plant_idempotently():
    seed.seed(io.StringIO())
    counts = (Cell.objects.count(), SignalDefinition.objects.count(), SignalSample.objects.count())
    seed.seed(io.StringIO())
    assert (Cell.objects.count(), SignalDefinition.objects.count(), SignalSample.objects.count()) == counts
    assert Cell.objects.filter(onboarding_complete=True).count() >= 3
    assert SignalDefinition.objects.count() >= 12
    vib = SignalDefinition.objects.get(cell__tag="P-02", key="vibration_mm_s")
    assert (vib.alert, vib.trip, vib.deadband) == (4.5, 7.1, 0.2)
    pressure = SignalDefinition.objects.get(cell__tag="P-02", key="discharge_pressure_bar")
    assert pressure.low_alert is not None and pressure.alert is not None
    flow = SignalDefinition.objects.get(cell__tag="P-02", key="flow_m3_h")
    assert flow.low_alert is not None and flow.alert is not None
    assert {s.key for s in SignalDefinition.objects.filter(cell__tag="P-02")} >= {
        "vibration_mm_s", "bearing_temp_c", "discharge_pressure_bar", "flow_m3_h", "motor_current_a",
        "suction_pressure_bar",
    }  # fmt: skip
    assert SignalLatest.objects.count() == SignalDefinition.objects.count()
    # History is normal: no alarms, and trends have data for the last hours.
    assert not Alarm.objects.exists()
    trend = signal_trends(signal=vib, minutes=180, buckets=36)
    assert all(p["count"] > 0 for p in trend["points"][1:])
    assert all(1.5 < p["avg"] < 3.0 for p in trend["points"] if p["count"])


def test_steady_simulation_raises_nothing():
    seed.seed(io.StringIO())
    sim = Simulator(interval=1, seed=1)
    for i in range(5):
        sim.tick(timezone.now() + timedelta(milliseconds=i))
    assert sim.channels and len(sim.channels) == SignalDefinition.objects.filter(cell__onboarding_complete=True).count()
    sentinel_scan()
    assert not Alarm.objects.exists()


def test_p02_bearing_scenario_ramps_vibration_to_an_alert():
    seed.seed(io.StringIO())
    sim = Simulator(scenario="p02-bearing", interval=1, ramp_seconds=90, seed=3)
    start = timezone.now()
    values = []
    for second in range(0, 121, 10):
        sim.tick(start + timedelta(seconds=second))
        values.append(SignalLatest.objects.get(signal__cell__tag="P-02", signal__key="vibration_mm_s").value)
    assert values[0] < 2.5 and values[-1] > 4.7
    alarm = Alarm.objects.get()
    assert (alarm.signal.cell.tag, alarm.signal.key, alarm.severity, alarm.direction) == (
        "P-02", "vibration_mm_s", "alert", "high",
    )  # fmt: skip
    temp = SignalLatest.objects.get(signal__cell__tag="P-02", signal__key="bearing_temp_c").value
    assert 70 < temp < 80


def test_simulate_command_once():
    seed.seed(io.StringIO())
    out = io.StringIO()
    call_command("simulate", "--scenario", "p02-bearing", "--once", "--ramp-seconds", "0", "--seed", "1", stdout=out)
    assert "1 round(s)" in out.getvalue()
    assert Alarm.objects.filter(signal__key="vibration_mm_s", signal__cell__tag="P-02").exists()
