import pytest
from django.db import transaction

from core.audit import audit_verify
from core.errors import Conflict, InvalidInput
from core.models import AuditRecord, Event
from sentinel.models import Alarm
from sentinel.signals import alarm_escalated, alarm_raised
from tests.workorders import factories as f
from workorders.models import EquipmentKB, FailureHistory, WorkOrder
from workorders.services import (
    equipment_kb_update,
    merge_patch,
    system_user,
    work_order_apply_rca,
    work_order_create_from_alarm,
    work_order_transition,
)

pytestmark = pytest.mark.django_db


def test_the_happy_path_writes_one_event_and_one_audit_record_per_transition(cell, operator):
    wo = f.make_work_order(cell)
    audits_before = AuditRecord.objects.count()
    for status in ("analyzed", "open", "in_progress", "completed"):
        rca = {"rca_summary": "bearing_wear: worn"} if status == "analyzed" else {}
        wo = work_order_transition(work_order=wo, to_status=status, actor=operator, note="go", **rca)
    assert wo.status == "completed"
    events = list(wo.events.values_list("from_status", "to_status", "actor__username"))
    assert events == [
        ("detected", "analyzed", "olga"),
        ("analyzed", "open", "olga"),
        ("open", "in_progress", "olga"),
        ("in_progress", "completed", "olga"),
    ]
    audits = AuditRecord.objects.filter(action="work_order.transition", target_id=str(wo.pk))
    assert audits.count() == 4 == AuditRecord.objects.count() - audits_before
    assert audits.last().details == {"from": "in_progress", "to": "completed", "note": "go"}
    assert audit_verify() is None


@pytest.mark.parametrize(
    ("status", "to_status", "allowed"),
    [
        ("detected", "open", ["analyzed", "cancelled"]),
        ("open", "completed", ["in_progress", "cancelled"]),
        ("completed", "open", []),
        ("cancelled", "detected", []),
    ],
)
def test_illegal_transitions_conflict_with_the_allowed_moves_and_change_nothing(
    cell, operator, status, to_status, allowed
):
    wo = f.make_work_order(cell, status=status)
    with pytest.raises(Conflict) as exc:
        work_order_transition(work_order=wo, to_status=to_status, actor=operator)
    assert exc.value.status_code == 409
    assert exc.value.extra["allowed"] == allowed
    wo.refresh_from_db()
    assert wo.status == status
    assert not wo.events.exists()


def test_unknown_status_is_invalid_input(cell, operator):
    with pytest.raises(InvalidInput):
        work_order_transition(work_order=f.make_work_order(cell), to_status="done", actor=operator)


def test_new_alarm_opens_a_detected_order_announces_it_and_queues_the_investigation(
    vibration, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False) as callbacks, transaction.atomic():
        alarm = f.make_alarm(vibration, value=5.0)
        alarm_raised.send(sender=Alarm, alarm=alarm)
    wo = WorkOrder.objects.get(triggered_by_alarm=alarm)
    assert (wo.status, wo.priority) == ("detected", "medium")
    assert wo.triggered_by_signal_def == vibration
    assert wo.trigger_anomaly_time == alarm.raised_at
    anomaly = Event.objects.get(type="anomaly_detected")
    assert anomaly.payload | {"time": None, "turn_id": None} == {
        "cell_id": vibration.cell_id,
        "signal_def_id": vibration.pk,
        "value": 5.0,
        "threshold": 4.5,
        "work_order_id": wo.pk,
        "time": None,
        "severity": "alert",
        "direction": "high",
        "turn_id": None,
    }
    banner = Event.objects.get(type="ui_render").payload
    assert banner["agent"] == "sentinel" and banner["component"] == "alert_banner"
    assert banner["props"]["cell_id"] == vibration.cell_id
    assert banner["props"]["anomaly_id"] == alarm.pk
    assert "TOO HIGH" in banner["props"]["message"]
    # the broadcast and the investigation wait for the commit
    assert len(callbacks) >= 3
    # one work order per alarm
    assert work_order_create_from_alarm(alarm=alarm) == wo
    assert WorkOrder.objects.filter(triggered_by_alarm=alarm).count() == 1


def test_trip_alarm_is_critical_and_escalation_raises_priority(vibration, django_capture_on_commit_callbacks):
    trip = f.make_alarm(vibration, value=7.5, severity="trip")
    assert work_order_create_from_alarm(alarm=trip).priority == "critical"

    other = f.make_signal(  # another pump: an alarm on P-02 now would join the trip's order (same episode)
        f.make_cell("P-03"), "bearing_temp_c", display_name="Bearing temperature", unit="°C", alert=80, trip=95
    )
    alarm = f.make_alarm(other, value=82)
    wo = work_order_create_from_alarm(alarm=alarm)
    assert wo.priority == "medium"
    Alarm.objects.filter(pk=alarm.pk).update(severity="trip", threshold_field="trip", threshold_value=95, value=96)
    alarm.refresh_from_db()
    alarm_escalated.send(sender=Alarm, alarm=alarm, previous_severity="alert", previous_threshold_field="alert")
    wo.refresh_from_db()
    assert wo.priority == "critical"
    assert AuditRecord.objects.filter(action="work_order.priority_raised", target_id=str(wo.pk)).exists()
    assert Event.objects.filter(type="ui_render", payload__props__severity="trip").exists()


def test_a_failing_work_order_never_rolls_back_the_alarm(vibration, monkeypatch):
    from workorders import receivers

    def boom(**kwargs):
        raise RuntimeError("db hiccup")

    monkeypatch.setattr(receivers, "work_order_create_from_alarm", boom)
    with transaction.atomic():
        alarm = f.make_alarm(vibration)
        alarm_raised.send(sender=Alarm, alarm=alarm)
    assert Alarm.objects.filter(pk=alarm.pk).exists()
    assert not WorkOrder.objects.exists()


def test_rca_is_applied_once_and_records_one_failure(cell, django_capture_on_commit_callbacks):
    wo = f.make_work_order(cell)
    rca = {"root_cause": "bearing_wear: worn DE bearing", "confidence": 0.8, "signal_patterns": {"v": {"peak": 5.0}}}
    assert work_order_apply_rca(work_order=wo, rca=rca, agent="investigator", actor=None) is not None
    assert work_order_apply_rca(work_order=wo, rca=rca | {"confidence": 0.1}, agent="investigator", actor=None) is None
    wo.refresh_from_db()
    assert (wo.status, wo.confidence) == ("analyzed", 0.8)
    failure = FailureHistory.objects.get(work_order=wo)
    assert (failure.failure_mode, failure.signal_patterns) == ("bearing_wear", {"v": {"peak": 5.0}})
    assert Event.objects.filter(type="rca_ready").count() == 1


def test_completing_without_a_report_unshelves_alarms_but_confirms_nothing(vibration, operator):
    alarm = f.make_alarm(vibration)
    Alarm.objects.filter(pk=alarm.pk).update(
        state="shelved", shelved_until_work_order_closes=True, state_before_shelve="active_unack"
    )
    wo = f.make_work_order(vibration.cell, status="in_progress", triggered_by_alarm=alarm)
    FailureHistory.objects.create(cell=vibration.cell, failure_time=wo.created_at, failure_mode="x", work_order=wo)
    work_order_transition(work_order=wo, to_status="completed", actor=operator)
    # the proposed cause stays a proposal: only a completion report confirms or corrects it
    failure = FailureHistory.objects.get(work_order=wo)
    assert (failure.verification, failure.resolved_time) == ("proposed", None)
    alarm.refresh_from_db()
    assert alarm.state != "shelved"


def test_merge_patch_follows_rfc_7386():
    target = {"a": 1, "b": {"c": 2, "d": 3}, "e": [1]}
    assert merge_patch(target, {"a": None, "b": {"c": 20, "d": None, "x": 1}, "e": [2]}) == {
        "b": {"c": 20, "x": 1},
        "e": [2],
    }


def test_kb_update_merges_logs_and_audits(cell, operator):
    f.make_kb(cell, {"equipment": {"rpm": 2950, "kw": 55}, "notes": "old"})
    kb = equipment_kb_update(
        cell=cell, patch={"equipment": {"kw": 75}, "notes": None}, actor=operator, note="motor swap"
    )
    assert kb.data == {"equipment": {"rpm": 2950, "kw": 75}}
    entry = kb.calibration_log[-1]
    assert (entry["actor"], entry["changed"], entry["note"]) == ("olga", ["equipment", "notes"], "motor swap")
    equipment_kb_update(cell=cell, patch={"x": 1}, actor=operator)
    assert len(EquipmentKB.objects.get(cell=cell).calibration_log) == 2
    assert AuditRecord.objects.filter(action="equipment_kb.update").count() == 2
    with pytest.raises(InvalidInput):
        equipment_kb_update(cell=cell, patch=[1], actor=operator)


def test_system_user_is_an_operator_service_account():
    user = system_user()
    assert user == system_user()
    assert user.service_account.role == "system"
    from core.access import OPERATOR, has_scopes, is_service_account

    assert is_service_account(user) and has_scopes(user, [OPERATOR])
    assert not user.has_usable_password()
