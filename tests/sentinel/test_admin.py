import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from core.models import AuditRecord
from sentinel.models import Alarm
from sentinel.services import alarm_raise
from sentinel.thresholds import evaluate_threshold
from tests.sentinel.factories import set_latest

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
    record = AuditRecord.objects.get(action="signal.thresholds_change")
    assert record.details == {"alert": 4.0}
