"""The executor applies a plan's cell/line guidance to the steps still to run, batched reads too."""

import pytest

from core.models import Event
from orchestrator.models import Plan
from sentinel.models import Cell, Line
from tests.orchestrator.conftest import build_plan, start
from tests.workorders import factories as f

pytestmark = pytest.mark.django_db
SIGNALS = "workorders.get_current_signals"


def test_ready_reads_outside_the_guidance_are_skipped_not_batched(operator):
    a, b = f.make_cell("P-01"), f.make_cell("P-22")
    Cell.objects.filter(pk=b.pk).update(line=Line.objects.create(site=a.line.site, name="Line 2"))
    wo = f.make_work_order(a, status="detected")
    steps = [
        {"capability": SIGNALS, "inputs": {"cell_id": a.pk}},
        {"capability": SIGNALS, "inputs": {"cell_id": b.pk}},
        {"capability": "workorders.get_work_order", "inputs": {"work_order_id": wo.pk}},  # its cell is P-01
        {"capability": SIGNALS, "inputs": {"cell_id": b.pk}},
    ]
    plan = build_plan(operator, steps)
    Plan.objects.filter(pk=plan.pk).update(constraints={"lines": ["line 2"]})
    plan = start(plan)
    status = {s.order: (s.status, s.error) for s in plan.steps.all()}
    assert plan.status == "completed"
    assert [status[o][0] for o in (1, 2, 3, 4)] == ["skipped", "done", "skipped", "done"]
    assert "Skipped by the plan's guidance: only line 2" in status[1][1] and status[2][1] == ""
    skipped = Event.objects.filter(type="plan_updated", payload__plan_id=plan.pk, payload__step_status="skipped")
    assert skipped.count() == 2


def test_no_guidance_changes_nothing(operator):
    a = f.make_cell("P-01")
    plan = start(build_plan(operator, [{"capability": SIGNALS, "inputs": {"cell_id": a.pk}}]))
    assert [s.status for s in plan.steps.all()] == ["done"]
