"""Limits edited in the admin obey the management-of-change rule (`limits_problem`): the change
form, a changelist row and the cell's signal inline refuse an alert above its trip or a negative
deadband on the field; nothing is stored or audited."""

import pytest
from django.contrib.auth.models import User

from core.models import AuditRecord

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(client):
    client.force_login(User.objects.create_superuser("root", "root@example.com", "pw"))
    return client


def _signal_form(signal, **overrides) -> dict:
    data = {
        "cell": signal.cell_id, "key": signal.key, "display_name": signal.display_name, "unit": "mm/s",
        "enabled": "on", "low_alert": "", "alert": "4.5", "high_alert": "", "trip": "7.1", "deadband": "0.2",
        "on_delay_seconds": "0",
    }  # fmt: skip
    return {**data, **overrides}


def _unchanged(signal) -> None:
    signal.refresh_from_db()
    assert (signal.alert, signal.trip, signal.deadband) == (4.5, 7.1, 0.2)
    assert not AuditRecord.objects.filter(action__in=["signal.thresholds_change", "signal.limits_change"]).exists()


@pytest.mark.parametrize(
    ("overrides", "field", "said"),
    [
        ({"alert": "9"}, "alert", "9 must be below trip (7.1)."),
        ({"trip": "3"}, "trip", "3 must be above alert (4.5)."),
        ({"deadband": "-3"}, "deadband", "must be 0 or more (got -3.0)."),
        ({"alert": "", "trip": ""}, "alert", "a signal needs at least one limit."),
    ],
)
def test_the_change_form_refuses_an_unsound_limit_set(staff, vibration, overrides, field, said):
    response = staff.post(
        f"/admin/sentinel/signaldefinition/{vibration.pk}/change/", _signal_form(vibration, **overrides)
    )
    assert response.status_code == 200
    assert response.context["adminform"].form.errors[field] == [said]
    _unchanged(vibration)


def test_a_changelist_row_refuses_an_alert_above_its_trip(staff, vibration):
    row = {"alert": "9", "trip": "7.1", "low_alert": "", "high_alert": "", "deadband": "0.2", "on_delay_seconds": "0"}
    data = {
        "form-TOTAL_FORMS": "1", "form-INITIAL_FORMS": "1", "form-MIN_NUM_FORMS": "0", "form-MAX_NUM_FORMS": "1000",
        "form-0-id": str(vibration.pk), "form-0-enabled": "on", "_save": "Save",
        **{f"form-0-{name}": value for name, value in row.items()},
    }  # fmt: skip
    response = staff.post("/admin/sentinel/signaldefinition/", data)
    assert response.status_code == 200
    assert response.context["cl"].formset.forms[0].errors["alert"] == ["9 must be below trip (7.1)."]
    _unchanged(vibration)


def test_the_cell_inline_refuses_a_negative_deadband(staff, vibration):
    cell = vibration.cell
    signal = {
        "id": vibration.pk, "cell": cell.pk, "key": vibration.key, "display_name": vibration.display_name,
        "unit": "mm/s", "enabled": "on", "low_alert": "", "alert": "4.5", "high_alert": "", "trip": "7.1",
        "deadband": "-1", "on_delay_seconds": "0",
    }  # fmt: skip
    data = {
        "line": cell.line_id, "tag": cell.tag, "name": cell.name, "equipment_type": cell.equipment_type,
        "signals-TOTAL_FORMS": "1", "signals-INITIAL_FORMS": "1", "signals-MIN_NUM_FORMS": "0",
        "signals-MAX_NUM_FORMS": "1000", **{f"signals-0-{name}": value for name, value in signal.items()},
    }  # fmt: skip
    response = staff.post(f"/admin/sentinel/cell/{cell.pk}/change/", data)
    assert response.status_code == 200
    assert response.context["inline_admin_formsets"][0].formset.forms[0].errors["deadband"] == [
        "must be 0 or more (got -1.0)."
    ]
    _unchanged(vibration)


def test_a_sound_change_to_one_limit_is_still_saved(staff, vibration):
    response = staff.post(f"/admin/sentinel/signaldefinition/{vibration.pk}/change/", _signal_form(vibration, trip="8"))
    assert response.status_code == 302
    vibration.refresh_from_db()
    assert vibration.trip == 8.0
    assert not AuditRecord.objects.filter(action="signal.thresholds_change").exists()  # a limit: signal.limits_change
    assert AuditRecord.objects.get(action="signal.limits_change").details["changed"] == ["trip"]
