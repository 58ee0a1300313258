import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from core.models import AuditRecord
from sentinel.models import Alarm, SignalDefinition
from sentinel.services import alarm_raise
from sentinel.thresholds import evaluate_threshold
from tests.sentinel.factories import make_signal, set_latest

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(client):
    user = User.objects.create_superuser("root", "root@example.com", "pw")
    client.force_login(user)
    return client


@pytest.fixture
def alarm(vibration):
    set_latest(vibration, 5.0)
    return alarm_raise(signal=vibration, breach=evaluate_threshold(vibration, 5.0), value=5.0, time=timezone.now())


@pytest.mark.parametrize(
    "url",
    [
        "/admin/sentinel/alarm/",
        "/admin/sentinel/signaldefinition/",
        "/admin/sentinel/cell/",
        "/admin/sentinel/site/",
        "/admin/sentinel/line/",
        "/admin/sentinel/signallatest/",
        "/admin/sentinel/stalecondition/",
    ],
)
def test_changelists_render(staff, alarm, url):
    assert staff.get(url).status_code == 200


def test_alarm_detail_shows_its_events(staff, alarm):
    response = staff.get(f"/admin/sentinel/alarm/{alarm.pk}/change/")
    assert response.status_code == 200
    assert b"active_unack" in response.content


@pytest.mark.parametrize(
    ("action", "state"),
    [("acknowledge", "acknowledged"), ("shelve_one_hour", "shelved"), ("put_out_of_service", "out_of_service")],
)
def test_alarm_actions_call_the_services_and_audit(staff, alarm, action, state):
    data = {"action": action, "_selected_action": [alarm.pk], "comment": "bearing work"}
    response = staff.post("/admin/sentinel/alarm/", data, follow=True)
    assert response.status_code == 200
    alarm.refresh_from_db()
    assert alarm.state == state
    assert alarm.events.count() == 2
    assert AuditRecord.objects.filter(target_type="sentinel.alarm", actor_label="root").count() == 1


def test_an_alarm_out_of_service_returns_to_service_from_the_admin(staff, alarm):
    """Put out of service from the admin, it could only come back over the API."""
    staff.post("/admin/sentinel/alarm/", {"action": "put_out_of_service", "_selected_action": [alarm.pk],
                                          "comment": "sensor replaced"})  # fmt: skip
    assert Alarm.objects.get().state == "out_of_service"
    data = {"action": "return_to_service", "_selected_action": [alarm.pk], "comment": "sensor back"}
    response = staff.post("/admin/sentinel/alarm/", data, follow=True)
    assert "Returned to service" in response.content.decode()
    alarm.refresh_from_db()
    assert alarm.state == "active_unack"  # the value is still over the limit: annunciated again
    last = alarm.events.order_by("pk").last()
    assert (last.from_state, last.to_state, last.comment) == ("out_of_service", "active_unack", "sensor back")
    assert AuditRecord.objects.filter(target_type="sentinel.alarm", actor_label="root").count() == 2
    # not out of service: refused, unchanged
    staff.post("/admin/sentinel/alarm/", data, follow=True)
    assert Alarm.objects.get().state == "active_unack"


def test_illegal_admin_action_is_reported_not_raised(staff, alarm):
    staff.post("/admin/sentinel/alarm/", {"action": "unshelve", "_selected_action": [alarm.pk]}, follow=True)
    assert Alarm.objects.get().state == "active_unack"


def test_threshold_edit_is_audited(staff, vibration):
    data = {
        "cell": vibration.cell_id, "key": vibration.key, "display_name": vibration.display_name, "unit": "mm/s",
        "enabled": "on", "alert": "4.0", "trip": "7.1", "deadband": "0.2", "on_delay_seconds": "0",
        "low_alert": "", "high_alert": "",
    }  # fmt: skip
    response = staff.post(f"/admin/sentinel/signaldefinition/{vibration.pk}/change/", data)
    assert response.status_code == 302, response.content[:2000]
    vibration.refresh_from_db()
    assert vibration.alert == 4.0
    record = AuditRecord.objects.get(action="signal.limits_change")  # the management-of-change record
    assert (record.details["before"]["alert"], record.details["after"]["alert"], record.details["changed"]) == (
        4.5,
        4.0,
        ["alert"],
    )


# A signal added or deleted in the admin is audited like a threshold edit: adding one brings new limits
# into force, deleting one takes its alarms' signal and its history away. Neither wrote a record.


def _audits(action: str) -> list[tuple[str, dict]]:
    return [(r.target_id, r.details) for r in AuditRecord.objects.filter(action=action).order_by("pk")]


def test_a_signal_added_on_its_page_is_audited_with_its_limits(staff, cell):
    data = {
        "cell": cell.pk, "key": "flow_m3_h", "display_name": "Flow", "unit": "m3/h", "enabled": "on",
        "low_alert": "80", "alert": "160", "high_alert": "", "trip": "", "deadband": "2", "on_delay_seconds": "5",
    }  # fmt: skip
    assert staff.post("/admin/sentinel/signaldefinition/add/", data).status_code == 302
    signal = SignalDefinition.objects.get(key="flow_m3_h")
    limits = {"low_alert": 80.0, "alert": 160.0, "high_alert": None, "trip": None, "deadband": 2.0}
    expected = {"cell_tag": "P-02", "key": "flow_m3_h", **limits, "on_delay_seconds": 5, "enabled": True}
    assert _audits("signal.create") == [(str(signal.pk), expected)]


def test_signals_deleted_from_their_page_and_from_the_list_are_audited(staff, cell, vibration):
    other = make_signal(cell, "bearing_temp_c", alert=80.0, trip=95.0)
    third = make_signal(cell, "motor_current_a", alert=52.0, trip=60.0)
    assert staff.post(f"/admin/sentinel/signaldefinition/{vibration.pk}/delete/", {"post": "yes"}).status_code == 302
    data = {"action": "delete_selected", "_selected_action": [other.pk, third.pk], "post": "yes"}
    assert staff.post("/admin/sentinel/signaldefinition/", data).status_code == 302
    assert not SignalDefinition.objects.exists()
    assert _audits("signal.delete") == [
        (str(vibration.pk), {"cell_tag": "P-02", "key": "vibration_mm_s"}),
        (str(other.pk), {"cell_tag": "P-02", "key": "bearing_temp_c"}),
        (str(third.pk), {"cell_tag": "P-02", "key": "motor_current_a"}),
    ]


def test_signals_added_and_deleted_in_the_cell_inline_are_audited(staff, cell, vibration):
    row = {"cell": cell.pk, "unit": "mm/s", "enabled": "on", "low_alert": "", "high_alert": "", "on_delay_seconds": "0"}
    old = {**row, "id": vibration.pk, "key": vibration.key, "display_name": "v", "alert": "4.5", "trip": "7.1",
           "deadband": "0.2", "DELETE": "on"}  # fmt: skip
    new = {
        **row,
        "key": "axial_vibration_mm_s",
        "display_name": "Axial",
        "alert": "4.5",
        "trip": "7.1",
        "deadband": "0.2",
    }
    data = {
        "line": cell.line_id, "tag": cell.tag, "name": cell.name, "equipment_type": cell.equipment_type,
        "signals-TOTAL_FORMS": "2", "signals-INITIAL_FORMS": "1", "signals-MIN_NUM_FORMS": "0",
        "signals-MAX_NUM_FORMS": "1000", **{f"signals-0-{k}": v for k, v in old.items()},
        **{f"signals-1-{k}": v for k, v in new.items()},
    }  # fmt: skip
    response = staff.post(f"/admin/sentinel/cell/{cell.pk}/change/", data)
    assert response.status_code == 302, response.content.decode()[:3000]
    added = SignalDefinition.objects.get()
    assert added.key == "axial_vibration_mm_s"
    assert [(pk, d["key"], d["alert"]) for pk, d in _audits("signal.create")] == [
        (str(added.pk), "axial_vibration_mm_s", 4.5)
    ]
    assert _audits("signal.delete") == [(str(vibration.pk), {"cell_tag": "P-02", "key": "vibration_mm_s"})]


def test_the_evaluations_state_is_not_deleted_in_the_admin(staff, vibration):
    """A signal's latest row (its breach timer, its stale flag) and its stale conditions are written
    by ingest and the scan; even a superuser deleting them in the admin is refused, row and bulk."""
    from sentinel.models import SignalLatest, StaleCondition

    set_latest(vibration, 5.0)
    stale = StaleCondition.objects.create(signal=vibration, raised_at=timezone.now())
    for model, pk in (("signallatest", vibration.pk), ("stalecondition", stale.pk)):
        assert staff.post(f"/admin/sentinel/{model}/{pk}/delete/", {"post": "yes"}).status_code == 403
        staff.post(f"/admin/sentinel/{model}/", {"action": "delete_selected", "_selected_action": [pk], "post": "yes"})
    assert (
        SignalLatest.objects.filter(signal=vibration).exists() and StaleCondition.objects.filter(pk=stale.pk).exists()
    )


def test_disabling_a_signal_or_a_cell_puts_its_open_alarms_out_of_service(staff, alarm, vibration, cell):
    """The scan skips a disabled signal and a cell off onboarding, so their open alarms stood in the
    Control Room for good (nothing clears them). Disabling in the admin now puts them out of service
    with the reason — audited and announced like any person's move — and a cleared alarm stays."""
    from core.models import Event

    form = {
        "cell": cell.pk, "key": vibration.key, "display_name": vibration.display_name, "unit": vibration.unit,
        "alert": 4.5, "trip": 7.1, "deadband": 0.2, "on_delay_seconds": 0,  # enabled unticked
    }  # fmt: skip
    response = staff.post(f"/admin/sentinel/signaldefinition/{vibration.pk}/change/", form)
    assert response.status_code == 302, response.content[:500]

    alarm.refresh_from_db()
    assert alarm.state == "out_of_service"
    assert alarm.events.last().comment == f"signal {cell.tag} {vibration.key} disabled in the admin by root"
    assert AuditRecord.objects.filter(action="alarm.out_of_service", target_id=str(alarm.pk)).exists()
    assert Event.objects.filter(type="alarm_changed", payload__alarm_id=alarm.pk, payload__to_state="out_of_service")

    other = make_signal(cell, "bearing_temp_c", alert=80.0, trip=95.0)
    set_latest(other, 90.0)
    second = alarm_raise(signal=other, breach=evaluate_threshold(other, 90.0), value=90.0, time=timezone.now())
    cell_form = {
        "line": cell.line_id, "tag": cell.tag, "name": cell.name, "equipment_type": cell.equipment_type,
        "signals-TOTAL_FORMS": 0, "signals-INITIAL_FORMS": 0,  # onboarding_complete unticked
    }  # fmt: skip
    response = staff.post(f"/admin/sentinel/cell/{cell.pk}/change/", cell_form)
    assert response.status_code == 302, response.content[:800]
    second.refresh_from_db()
    assert second.state == "out_of_service"
    assert "taken off onboarding in the admin by root" in second.events.last().comment
