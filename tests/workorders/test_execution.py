"""Work execution services: assign from the roster, start, hold, cancel, complete with a report."""

from __future__ import annotations

import pytest

from core.errors import Conflict, Forbidden, InvalidInput
from core.models import AuditRecord, Event
from sentinel.models import Alarm
from tests.workorders import factories as f
from tests.workorders.execution_helpers import CAVITATION, analysed_order, report, shift_covering
from workorders.models import CompletionReport, EquipmentKB, FailureHistory, WorkOrder
from workorders.services import work_order_transition
from workorders.services.execution import (
    work_order_assign,
    work_order_cancel,
    work_order_complete,
    work_order_hold,
    work_order_start,
)

pytestmark = pytest.mark.django_db


def on_hand(cell, ref: str) -> int:
    parts = EquipmentKB.objects.get(cell=cell).data["spare_parts"]
    return next(p["on_hand"] for p in parts if p["ref"] == ref)


def updates(wo) -> list[tuple[str, str]]:
    rows = Event.objects.filter(type="work_order_updated", payload__work_order_id=wo.pk).order_by("id")
    return [(e.payload["change"], e.payload["status"]) for e in rows]


def test_assign_start_hold_resume_and_complete_confirming_the_rca(cell, operator):
    wo = analysed_order(cell)
    shift = shift_covering(wo)

    _, conflicts = work_order_assign(work_order=wo, shift_assignment=shift, actor=operator)
    assert conflicts == []
    work_order_start(work_order=wo, actor=operator)
    work_order_hold(work_order=wo, reason="waiting_permit", actor=operator, note="hot-work permit pending")
    wo.refresh_from_db()
    assert (wo.status, wo.hold_reason, wo.assigned_technician) == ("on_hold", "waiting_permit", "Marta Silva")
    work_order_start(work_order=wo, actor=operator)
    stock = on_hand(cell, "SKF-6310-2Z-C3")

    done = work_order_complete(work_order=wo, actor=operator, **report())

    wo.refresh_from_db()
    assert (wo.status, wo.hold_reason) == ("completed", "")
    assert (done.rca_verdict, done.technician, float(done.labour_hours)) == ("confirmed", "Marta Silva", 3.5)
    assert done.parts_used == [{"ref": "SKF-6310-2Z-C3", "qty": 1, "name": "DE bearing"}]
    assert on_hand(cell, "SKF-6310-2Z-C3") == stock - 1
    failure = FailureHistory.objects.get(work_order=wo)
    assert (failure.verification, failure.failure_mode, failure.confirmed_failure_mode) == (
        "confirmed",
        "bearing_wear",
        "bearing_wear",
    )
    assert failure.resolved_time is not None and failure.confirmed_by == operator
    # every step audited and live on the bus
    assert updates(wo) == [
        ("transition", "analyzed"),
        ("transition", "open"),
        ("assigned", "open"),
        ("transition", "in_progress"),
        ("transition", "on_hold"),
        ("transition", "in_progress"),
        ("transition", "completed"),
    ]
    actions = set(AuditRecord.objects.filter(target_id=str(wo.pk)).values_list("action", flat=True))
    assert {"work_order.assign", "work_order.transition"} <= actions
    assert AuditRecord.objects.filter(action="failure_history.confirm", target_id=str(failure.pk)).exists()


def test_a_correction_is_kept_beside_the_proposal(cell, operator):
    wo = analysed_order(cell, mode="cavitation")
    work_order_start(work_order=wo, actor=operator)
    work_order_complete(
        work_order=wo,
        actor=operator,
        **report(rca_verdict="corrected", actual_root_cause="DE bearing outer race spalled; grease dried out."),
    )
    failure = FailureHistory.objects.get(work_order=wo)
    assert failure.verification == "corrected"
    assert (failure.failure_mode, failure.actual_failure_mode) == ("cavitation", "bearing_wear")
    assert "outer race spalled" in failure.actual_root_cause
    assert failure.root_cause.startswith("cavitation")  # the proposal, untouched


def test_assignment_warns_off_shift_double_booked_and_missing_skills(cell, operator):
    first, second = analysed_order(cell), analysed_order(cell)
    work_order_assign(work_order=first, shift_assignment=shift_covering(first), actor=operator)
    late = shift_covering(second, hours_off=12)  # starts long after the order's window
    late.skills = []
    late.save()

    _, conflicts = work_order_assign(work_order=second, shift_assignment=late, actor=operator)

    codes = {c["code"] for c in conflicts}
    assert codes == {"off_shift", "double_booked", "missing_skills"}
    second.refresh_from_db()
    assert second.assigned_technician == "Marta Silva"  # a warning, not a refusal
    assert second.events.last().details["conflicts"] == [c["code"] for c in conflicts]


def test_shortages_are_flagged_when_the_order_opens(cell):
    wo = analysed_order(cell, parts=[{"ref": "SKF-6310-2Z-C3", "qty": 5}, {"ref": "NOT-STOCKED", "qty": 1}])
    assert wo.part_shortages == [
        {"ref": "SKF-6310-2Z-C3", "qty": 5, "on_hand": 2, "listed": True},
        {"ref": "NOT-STOCKED", "qty": 1, "on_hand": 0, "listed": False},
    ]
    assert wo.events.get(to_status="open").details["part_shortages"] == wo.part_shortages
    assert analysed_order(cell).part_shortages == []


def test_approver_reads_but_cannot_act(cell, approver):
    wo = analysed_order(cell)
    for act in (
        lambda: work_order_start(work_order=wo, actor=approver),
        lambda: work_order_assign(work_order=wo, shift_assignment=shift_covering(wo), actor=approver),
        lambda: work_order_cancel(work_order=wo, actor=approver, reason="no"),
    ):
        with pytest.raises(Forbidden):
            act()
    wo.refresh_from_db()
    assert (wo.status, wo.assigned_technician) == ("open", "")


def test_illegal_moves_are_409(cell, operator):
    wo = analysed_order(cell)
    with pytest.raises(Conflict) as hold_open:
        work_order_hold(work_order=wo, reason="waiting_parts", actor=operator)
    assert hold_open.value.status_code == 409 and "in_progress" in hold_open.value.extra["allowed"]
    with pytest.raises(Conflict):  # a report needs a started order
        work_order_complete(work_order=wo, actor=operator, **report())
    detected = f.make_work_order(cell)
    with pytest.raises(Conflict):
        work_order_start(work_order=detected, actor=operator)


def test_completing_twice_is_409_and_changes_nothing(cell, operator):
    wo = analysed_order(cell)
    work_order_start(work_order=wo, actor=operator)
    work_order_complete(work_order=wo, actor=operator, **report())
    stock = on_hand(cell, "SKF-6310-2Z-C3")
    with pytest.raises(Conflict):
        work_order_complete(work_order=wo, actor=operator, **report(rca_verdict="corrected", actual_root_cause="x"))
    assert on_hand(cell, "SKF-6310-2Z-C3") == stock
    assert CompletionReport.objects.get(work_order=wo).rca_verdict == "confirmed"


@pytest.mark.parametrize(
    ("override", "field"),
    [
        ({"parts_used": [{"ref": "GREASE-LGHP2", "qty": 1}, {"ref": "SKF-6310-2Z-C3", "qty": 3}]}, "parts_used.1.qty"),
        ({"parts_used": [{"ref": "SKF-9999", "qty": 1}]}, "parts_used.0.ref"),
        ({"problem_code": "COMPRESSOR.valve_failure"}, "problem_code"),
        ({"problem_code": "PUMP.nope"}, "problem_code"),
        ({"cause_code": "NOPE"}, "cause_code"),
        ({"remedy_code": "NOPE"}, "remedy_code"),
        ({"problem_code": CAVITATION}, "rca_verdict"),  # "confirmed" but a different failure mode
        ({"rca_verdict": "corrected"}, "actual_root_cause"),
        ({"labour_hours": 0}, "labour_hours"),
        ({"work_done": "  "}, "work_done"),
    ],
)
def test_a_bad_report_is_422_naming_the_field_and_writes_nothing(cell, operator, override, field):
    wo = analysed_order(cell)
    work_order_start(work_order=wo, actor=operator)
    grease, bearing = on_hand(cell, "GREASE-LGHP2"), on_hand(cell, "SKF-6310-2Z-C3")
    with pytest.raises(InvalidInput) as bad:
        work_order_complete(work_order=wo, actor=operator, **report(**override))
    assert bad.value.field == field and bad.value.status_code == 422
    wo.refresh_from_db()
    assert wo.status == "in_progress" and not CompletionReport.objects.filter(work_order=wo).exists()
    assert (on_hand(cell, "GREASE-LGHP2"), on_hand(cell, "SKF-6310-2Z-C3")) == (grease, bearing)
    assert FailureHistory.objects.get(work_order=wo).verification == "proposed"


def test_hold_needs_a_known_reason(cell, operator):
    wo = analysed_order(cell)
    work_order_start(work_order=wo, actor=operator)
    with pytest.raises(InvalidInput) as bad:
        work_order_hold(work_order=wo, reason="lunch", actor=operator)
    assert bad.value.field == "reason"
    with pytest.raises(InvalidInput) as vague:
        work_order_hold(work_order=wo, reason="other", actor=operator)
    assert vague.value.field == "note"
    assert WorkOrder.objects.get(pk=wo.pk).status == "in_progress"


def test_cancel_with_a_reason_unshelves_the_alarm_waiting_on_the_order(vibration, operator):
    alarm = f.make_alarm(vibration)
    wo = analysed_order(vibration.cell)
    WorkOrder.objects.filter(pk=wo.pk).update(triggered_by_alarm=alarm)
    Alarm.objects.filter(pk=alarm.pk).update(
        state="shelved", shelved_until_work_order_closes=True, state_before_shelve="acknowledged"
    )
    with pytest.raises(InvalidInput):
        work_order_cancel(work_order=wo, actor=operator, reason=" ")
    work_order_cancel(work_order=wo, actor=operator, reason="duplicate of a planned overhaul")
    alarm.refresh_from_db()
    assert alarm.state != "shelved"
    assert WorkOrder.objects.get(pk=wo.pk).events.last().note == "Cancelled: duplicate of a planned overhaul"


def test_bare_completion_confirms_nothing(cell, operator):
    wo = analysed_order(cell)
    work_order_transition(work_order=wo, to_status="in_progress", actor=operator)
    work_order_transition(work_order=wo, to_status="completed", actor=operator)
    assert FailureHistory.objects.get(work_order=wo).verification == "proposed"
