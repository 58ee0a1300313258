from datetime import timedelta

import pytest
from django.utils import timezone

from workorders import kpis
from workorders.models import FailureHistory, ProductionRecord

pytestmark = pytest.mark.django_db


def test_oee_is_availability_times_performance_times_quality(cell):
    today = timezone.localdate()
    # 480 planned, 420 run → A = 0.875; ideal 30 s × 700 = 350 min → P = 350/420; Q = 686/700 = 0.98
    ProductionRecord.objects.create(
        cell=cell,
        date=today,
        shift="morning",
        planned_time_min=480,
        run_time_min=420,
        ideal_cycle_time_s=30,
        total_count=700,
        good_count=686,
    )
    # second shift with a different ideal cycle time: 480 run of 480, 60 s × 400 = 400 min
    ProductionRecord.objects.create(
        cell=cell,
        date=today,
        shift="afternoon",
        planned_time_min=480,
        run_time_min=480,
        ideal_cycle_time_s=60,
        total_count=400,
        good_count=400,
    )
    result = kpis.oee(cell, days=7)
    availability = 900 / 960
    performance = 750 / 900
    quality = 1086 / 1100
    assert result["availability"] == round(availability, 4)
    assert result["performance"] == round(performance, 4)
    assert result["quality"] == round(quality, 4)
    assert result["oee"] == pytest.approx(availability * performance * quality, abs=1e-3)


def test_oee_without_records_is_none(cell):
    assert kpis.oee(cell)["oee"] is None


def test_mtbf_and_mttr_from_failure_history(cell):
    now = timezone.now()
    for days, repair_h in ((10, 2), (40, 4), (70, None)):
        t = now - timedelta(days=days)
        FailureHistory.objects.create(
            cell=cell,
            failure_time=t,
            resolved_time=t + timedelta(hours=repair_h) if repair_h else None,
            failure_mode="bearing_wear",
            verification="confirmed",
        )
    FailureHistory.objects.create(
        cell=cell, failure_time=now - timedelta(days=200), failure_mode="old", verification="confirmed"
    )
    # An RCA nobody confirmed is not a failure for the KPIs, even with a resolved time.
    FailureHistory.objects.create(
        cell=cell, failure_time=now - timedelta(days=5), resolved_time=now, failure_mode="cavitation"
    )

    mtbf = kpis.mtbf(cell, days=90)
    assert mtbf["failures"] == 3
    assert mtbf["operating_hours"] == 90 * 24 - 6
    assert mtbf["mtbf_hours"] == round((90 * 24 - 6) / 3, 2)

    mttr = kpis.mttr(cell, days=90)
    assert (mttr["repairs"], mttr["repair_hours"], mttr["mttr_hours"]) == (2, 6.0, 3.0)


def test_no_failures_means_no_mtbf_or_mttr(cell):
    assert kpis.mtbf(cell)["mtbf_hours"] is None
    assert kpis.mttr(cell)["mttr_hours"] is None
