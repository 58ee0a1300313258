"""The Control Room snapshot: active work orders first, and a cell's old value is marked stale."""

from datetime import timedelta

import pytest
from django.utils import timezone

from sentinel.models import SignalLatest
from tests.workorders import factories as f
from workorders.views import RECENT_WORK_ORDERS, control_room_snapshot

pytestmark = pytest.mark.django_db


def test_active_work_orders_come_first_and_closed_ones_never_push_them_out(cell):
    active = f.make_work_order(cell, status="open")
    closed = [f.make_work_order(cell, status=s) for s in ["completed", "cancelled"] * RECENT_WORK_ORDERS]
    rows = control_room_snapshot()["work_orders"]
    assert rows[0]["id"] == active.pk
    statuses = [r["status"] for r in rows]
    assert statuses[1:] and set(statuses[1:]) <= {"completed", "cancelled"}
    assert rows[1]["id"] == closed[-1].pk  # newest closed next


def test_a_not_onboarded_cell_with_an_old_sample_is_flagged(cell):
    press = f.make_cell("PR-05")
    press.onboarding_complete = False
    press.save()
    pressure = f.make_signal(press, "hydraulic_pressure_bar", display_name="Hydraulic pressure", unit="bar")
    fresh = f.make_signal(cell)
    now = timezone.now()
    SignalLatest.objects.create(signal=pressure, time=now - timedelta(hours=3), value=180.0)
    SignalLatest.objects.create(signal=fresh, time=now, value=2.0)

    cells = {c["tag"]: c for c in control_room_snapshot()["cells"]}
    assert (cells["PR-05"]["onboarded"], cells["P-02"]["onboarded"]) == (False, True)
    assert cells["PR-05"]["signals"][0]["stale"] is True  # sentinel never scans it, the age still tells
    assert cells["P-02"]["signals"][0]["stale"] is False
