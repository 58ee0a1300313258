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


def test_every_active_order_is_listed_however_many_and_the_count_says_when_not(cell):
    # A flood opens many orders at once: the ninth newest active one was on no page an operator
    # can open (the snapshot listed 8), so nobody could assign, start or cancel it there.
    active = [f.make_work_order(cell, status=s) for s in ["open", "detected", "in_progress", "on_hold"] * 3]
    f.make_work_order(cell, status="completed")
    snapshot = control_room_snapshot()
    listed = [r["id"] for r in snapshot["work_orders"] if r["status"] != "completed"]
    assert listed == [wo.pk for wo in reversed(active)]
    assert snapshot["active_work_orders"] == 12
    more = [f.make_work_order(cell, status="open") for _ in range(RECENT_WORK_ORDERS)]
    snapshot = control_room_snapshot()
    assert snapshot["active_work_orders"] == 12 + len(more)
    assert len([r for r in snapshot["work_orders"] if r["status"] != "completed"]) == RECENT_WORK_ORDERS
