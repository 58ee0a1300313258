"""A limit edited in the admin is a limit change like the management-of-change path's: the change
page, a changelist row and the cell's signal inline each leave one `signal.limits_change` audit
record and one `signal_limits_changed` event (the Control Room redraws on it), and the signal is
re-evaluated against the new limits. Before, the admin saved the row with neither: clients saw a
limit change only from the gated path."""

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from core.models import AuditRecord, Event
from sentinel.models import Alarm
from sentinel.services import alarm_raise
from sentinel.services.limits import signal_limits_change
from sentinel.thresholds import evaluate_threshold
from tests.sentinel.factories import set_latest

pytestmark = pytest.mark.django_db
WHY = "limits edited in the admin by root"


@pytest.fixture
def staff(client):
    client.force_login(User.objects.create_superuser("root", "root@example.com", "pw"))
    return client


def _row(signal, **overrides) -> dict:
    data = {
        "low_alert": "", "alert": "4.5", "high_alert": "", "trip": "7.1", "deadband": "0.2", "on_delay_seconds": "0",
        "enabled": "on",
    }  # fmt: skip
    return {**data, **overrides}


def _change_page(staff, signal, **overrides):
    data = {"cell": signal.cell_id, "key": signal.key, "display_name": signal.display_name, "unit": "mm/s"}
    return staff.post(f"/admin/sentinel/signaldefinition/{signal.pk}/change/", {**data, **_row(signal, **overrides)})


def _changelist_row(staff, signal, **overrides):
    data = {
        "form-TOTAL_FORMS": "1", "form-INITIAL_FORMS": "1", "form-MIN_NUM_FORMS": "0", "form-MAX_NUM_FORMS": "1000",
        "form-0-id": str(signal.pk), "_save": "Save",
        **{f"form-0-{name}": value for name, value in _row(signal, **overrides).items()},
    }  # fmt: skip
    return staff.post("/admin/sentinel/signaldefinition/", data)


def _cell_inline(staff, signal, **overrides):
    cell = signal.cell
    row = {"id": signal.pk, "cell": cell.pk, "key": signal.key, "display_name": signal.display_name, "unit": "mm/s"}
    data = {
        "line": cell.line_id, "tag": cell.tag, "name": cell.name, "equipment_type": cell.equipment_type,
        "onboarding_complete": "on",
        "signals-TOTAL_FORMS": "1", "signals-INITIAL_FORMS": "1", "signals-MIN_NUM_FORMS": "0",
        "signals-MAX_NUM_FORMS": "1000",
        **{f"signals-0-{name}": value for name, value in {**row, **_row(signal, **overrides)}.items()},
    }  # fmt: skip
    return staff.post(f"/admin/sentinel/cell/{cell.pk}/change/", data)


def _announced() -> list[dict]:
    return [e.payload for e in Event.objects.filter(type="signal_limits_changed").order_by("id")]


def _records() -> list[dict]:
    return [r.details for r in AuditRecord.objects.filter(action="signal.limits_change").order_by("pk")]


@pytest.mark.parametrize("path", [_change_page, _changelist_row, _cell_inline])
def test_an_admin_limit_edit_is_announced_audited_and_re_evaluated(staff, vibration, path):
    # Given an open alarm at 5.0 over the alert limit 4.5
    set_latest(vibration, 5.0)
    alarm = alarm_raise(signal=vibration, breach=evaluate_threshold(vibration, 5.0), value=5.0, time=timezone.now())
    # When an engineer raises the alert limit to 6 in the admin
    assert path(staff, vibration, alert="6").status_code == 302
    # Then the Control Room hears of it, the change is on record, and the alarm is judged anew
    assert _announced() == [
        {
            "cell_id": vibration.cell_id,
            "signal_def_id": vibration.pk,
            "changes": {"alert": {"before": 4.5, "after": 6.0}},
            "reason": WHY,
        }
    ]
    [record] = _records()
    assert (record["before"]["alert"], record["after"]["alert"], record["changed"]) == (4.5, 6.0, ["alert"])
    assert record["requested_by"] == "root" and record["reason"] == WHY
    assert AuditRecord.objects.get(action="signal.limits_change").actor_label == "root"
    assert Alarm.objects.get(pk=alarm.pk).state == "cleared"  # 5.0 is inside 6 - 0.2 now


def test_a_limit_cleared_in_the_admin_is_announced_as_none(staff, vibration):
    assert _change_page(staff, vibration, alert="").status_code == 302
    assert [p["changes"] for p in _announced()] == [{"alert": {"before": 4.5, "after": None}}]


def test_a_save_that_changes_no_limit_announces_nothing(staff, vibration):
    assert _change_page(staff, vibration, alert="4.5").status_code == 302
    assert _changelist_row(staff, vibration).status_code == 302
    assert _announced() == [] and _records() == []


def test_a_refused_limit_announces_nothing(staff, vibration):
    assert _change_page(staff, vibration, alert="9").status_code == 200  # above its trip: refused on the field
    assert _announced() == [] and _records() == []


def test_both_paths_announce_the_same_change(staff, vibration, approver):
    signal_limits_change(signal=vibration, changes={"trip": 8.0}, reason="new coupling", actor=approver)
    assert _change_page(staff, vibration, trip="7.1").status_code == 302
    gated, admin = _announced()
    assert gated["changes"] == {"trip": {"before": 7.1, "after": 8.0}} and gated["reason"] == "new coupling"
    assert admin["changes"] == {"trip": {"before": 8.0, "after": 7.1}} and admin["reason"] == WHY
    assert set(gated) == set(admin)
    assert [(r["requested_by"], r["changed"]) for r in _records()] == [("april", ["trip"]), ("root", ["trip"])]
