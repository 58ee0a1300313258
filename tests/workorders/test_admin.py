import pytest

from core.models import AuditRecord
from tests.workorders import factories as f
from workorders.models import EquipmentKB

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(client, admin_user):
    admin_user.is_staff = True
    admin_user.is_superuser = True
    admin_user.save()
    client.force_login(admin_user)
    return client


def test_changelists_render(staff, plant):
    wo = f.make_work_order(plant)
    for url in (
        "/admin/workorders/workorder/",
        f"/admin/workorders/workorder/{wo.pk}/change/",
        "/admin/workorders/failurehistory/",
        "/admin/workorders/equipmentkb/",
        "/admin/workorders/logbookentry/",
        "/admin/workorders/shiftassignment/",
        "/admin/workorders/productionrecord/",
    ):
        assert staff.get(url).status_code == 200, url
    assert staff.get("/admin/workorders/workorder/?status__exact=detected&q=Test").status_code == 200


def test_actions_call_the_lifecycle_service(staff, cell):
    ready = f.make_work_order(cell, status="open")
    fresh = f.make_work_order(cell)
    response = staff.post(
        "/admin/workorders/workorder/",
        {"action": "mark_in_progress", "_selected_action": [ready.pk, fresh.pk]},
        follow=True,
    )
    assert response.status_code == 200
    ready.refresh_from_db()
    fresh.refresh_from_db()
    assert (ready.status, fresh.status) == ("in_progress", "detected")
    messages = [str(m) for m in response.context["messages"]]
    assert any("Allowed: analyzed, cancelled" in m for m in messages)
    staff.post("/admin/workorders/workorder/", {"action": "mark_completed", "_selected_action": [ready.pk]})
    staff.post("/admin/workorders/workorder/", {"action": "mark_cancelled", "_selected_action": [fresh.pk]})
    ready.refresh_from_db()
    fresh.refresh_from_db()
    assert (ready.status, fresh.status) == ("completed", "cancelled")
    assert AuditRecord.objects.filter(action="work_order.transition", actor_label="adam").count() == 3


def test_kb_edit_goes_through_the_service(staff, cell):
    kb = f.make_kb(cell, {"a": 1})
    response = staff.post(f"/admin/workorders/equipmentkb/{kb.pk}/change/", {"cell": cell.pk, "data": '{"b": 2}'})
    assert response.status_code == 302
    kb = EquipmentKB.objects.get(pk=kb.pk)
    assert kb.data == {"b": 2}
    assert kb.calibration_log[-1]["actor"] == "adam"
    assert AuditRecord.objects.filter(action="equipment_kb.update").exists()


def test_work_order_edit_goes_through_the_update_service(staff, cell):
    wo = f.make_work_order(cell, title="Old")
    url = f"/admin/workorders/workorder/{wo.pk}/change/"
    form = staff.get(url).context["adminform"].form
    data = {k: v for k, v in form.initial.items() if k in form.fields and v is not None}
    data.update({"title": "Replace DE bearing", "priority": "high", "required_parts": "[]", "required_skills": "[]",
                 "recommended_actions": "[]", "description": "", "events-TOTAL_FORMS": 0, "events-INITIAL_FORMS": 0})  # fmt: skip
    response = staff.post(url, data)
    assert response.status_code == 302, response.context["adminform"].form.errors
    wo.refresh_from_db()
    assert (wo.title, wo.priority, wo.status) == ("Replace DE bearing", "high", "detected")
    assert AuditRecord.objects.filter(action="work_order.update", target_id=str(wo.pk)).exists()


def test_admin_edit_refuses_a_window_that_ends_before_it_starts(staff, cell):
    wo = f.make_work_order(cell)
    url = f"/admin/workorders/workorder/{wo.pk}/change/"
    response = staff.post(url, f.work_order_change_form(wo, suggested_window_end_1="10:00:00"))
    assert response.status_code == 200  # the form again, with the error; no 500
    assert "The window must end after it starts." in response.content.decode()
    wo.refresh_from_db()
    assert wo.suggested_window_end is None
    response = staff.post(url, f.work_order_change_form(wo))
    assert response.status_code == 302
    wo.refresh_from_db()
    assert wo.estimated_duration_min == 240


def test_a_closed_order_is_shown_read_only_and_never_reported_as_changed(staff, cell):
    wo = f.make_work_order(cell, status="completed", title="Done")
    url = f"/admin/workorders/workorder/{wo.pk}/change/"
    assert not {"title", "priority", "description"} & set(staff.get(url).context["adminform"].form.fields)
    response = staff.post(url, f.work_order_change_form(wo, title="Rewritten", priority="low"))
    assert response.status_code == 403  # was a 302 saying "WO-1 Rewritten was changed successfully"
    wo.refresh_from_db()
    assert (wo.title, wo.priority) == ("Done", "medium")
    assert not AuditRecord.objects.filter(action="work_order.update", target_id=str(wo.pk)).exists()


def test_work_orders_cannot_be_deleted_in_the_admin(staff, cell):
    wo = f.make_work_order(cell)
    assert staff.post(f"/admin/workorders/workorder/{wo.pk}/delete/", {"post": "yes"}).status_code == 403
    response = staff.post("/admin/workorders/workorder/", {"action": "delete_selected", "_selected_action": [wo.pk]})
    assert response.status_code in (200, 302)
    assert type(wo).objects.filter(pk=wo.pk).exists()


def test_the_logbook_is_append_only_in_the_admin_too(staff, cell, operator):
    from workorders.models import LogbookEntry
    from workorders.services.logbook import logbook_entry_create

    entry = logbook_entry_create(cell=cell, author=operator, text="P-02 seal drips", category="observation")
    url = f"/admin/workorders/logbookentry/{entry.pk}/"
    assert staff.get(f"{url}change/").status_code == 200  # readable
    staff.post(f"{url}change/", {"cell": cell.pk, "text": "nothing to see", "category": "observation"})
    staff.post(f"{url}delete/", {"post": "yes"})
    staff.post(
        "/admin/workorders/logbookentry/", {"action": "delete_selected", "_selected_action": [entry.pk], "post": "yes"}
    )
    assert LogbookEntry.objects.get(pk=entry.pk).text == "P-02 seal drips"
    assert staff.get("/admin/workorders/logbookentry/add/").status_code == 403


def test_failure_history_edits_in_the_admin_are_audited_and_keep_the_shape(staff, cell):
    from workorders.models import FailureHistory

    failure = f.make_history(cell)[0]
    url = f"/admin/workorders/failurehistory/{failure.pk}/change/"
    form = {
        "cell": cell.pk, "failure_time_0": "2026-01-05", "failure_time_1": "10:00:00", "resolved_time_0": "",
        "resolved_time_1": "", "failure_mode": "bearing_wear", "root_cause": "DE bearing worn.",
        "signal_patterns": '{"vibration_mm_s": {"peak": 5.4}}', "work_order": "", "verification": "confirmed",
        "confirmed_failure_mode": "", "confirmed_root_cause": "", "confirmed_by": "", "confirmed_at_0": "",
        "confirmed_at_1": "",
    }  # fmt: skip
    for bad in ('["vibration_mm_s"]', '{"vibration_mm_s": 5}', '{"vibration_mm_s": {"peak": "high"}}'):
        response = staff.post(url, {**form, "signal_patterns": bad})
        assert response.status_code == 200 and "signal_patterns" in response.context["adminform"].form.errors, bad
    assert FailureHistory.objects.get(pk=failure.pk).signal_patterns == {
        "vibration_mm_s": {"peak": 5.4, "duration_min": 14}
    }
    assert not AuditRecord.objects.filter(target_type="failure_history").exists()

    assert staff.post(url, {**form, "failure_mode": "misalignment"}).status_code == 302
    assert FailureHistory.objects.get(pk=failure.pk).failure_mode == "misalignment"
    changed = AuditRecord.objects.get(action="failure_history.admin_change", target_id=str(failure.pk))
    assert changed.actor_label == "adam" and "failure_mode" in changed.details["fields"]
    assert staff.post(f"/admin/workorders/failurehistory/{failure.pk}/delete/", {"post": "yes"}).status_code == 302
    deleted = AuditRecord.objects.get(action="failure_history.admin_delete", target_id=str(failure.pk))
    assert deleted.details["failure_mode"] == "misalignment"
