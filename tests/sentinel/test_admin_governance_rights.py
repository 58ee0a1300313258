"""A signal's limits and the connectors are governance settings: in the admin, adding, changing or
deleting them needs the admin scope, never Django model permissions alone. A staff operator or
approver whose group was given the model permissions reads them and changes nothing."""

import pytest
from django.contrib.auth.models import Permission

from core.access import ADMIN, APPROVER, OPERATOR
from core.models import AuditRecord
from sentinel.models import Connector, ConnectorTag

pytestmark = pytest.mark.django_db

MODELS = ("signaldefinition", "connector", "connectortag", "cell", "line")


def _staff_with_model_permissions(make_user, name: str, scope: str):
    user = make_user(name, scope, is_staff=True)
    codenames = [f"{verb}_{model}" for verb in ("view", "add", "change", "delete") for model in MODELS]
    user.user_permissions.add(*Permission.objects.filter(content_type__app_label="sentinel", codename__in=codenames))
    return user


@pytest.fixture
def connector(vibration):
    connector = Connector.objects.create(name="line-1", kind="mqtt_json", endpoint="mqtt://broker.plant:1883")
    ConnectorTag.objects.create(connector=connector, source="plant/p02/vib", signal=vibration)
    return connector


def _connector_form(**overrides) -> dict:
    data = {
        "name": "line-1", "kind": "mqtt_json", "endpoint": "mqtt://evil.example:1883", "topic_filter": "#",
        "username_env": "", "password_env": "", "security_mode": "None", "security_policy": "",
        "certificate_path": "", "private_key_path": "", "enabled": "on", "tags-TOTAL_FORMS": "0",
        "tags-INITIAL_FORMS": "0", "tags-MIN_NUM_FORMS": "0", "tags-MAX_NUM_FORMS": "1000",
    }  # fmt: skip
    return {**data, **overrides}


def _signal_form(signal, **overrides) -> dict:
    data = {
        "cell": signal.cell_id, "key": signal.key, "display_name": signal.display_name, "unit": "mm/s",
        "enabled": "on", "low_alert": "", "alert": "6", "high_alert": "", "trip": "7.1", "deadband": "0.2",
        "on_delay_seconds": "0",
    }  # fmt: skip
    return {**data, **overrides}


@pytest.mark.parametrize("scope", [OPERATOR, APPROVER])
def test_staff_without_the_admin_scope_cannot_change_limits_or_connectors(
    client, make_user, vibration, connector, scope
):
    client.force_login(_staff_with_model_permissions(make_user, "stan", scope))
    cell = vibration.cell
    inline = {
        "signals-0-id": vibration.pk, "signals-0-cell": cell.pk, "signals-0-key": vibration.key,
        "signals-0-display_name": "x", "signals-0-alert": "6", "signals-0-trip": "7.1", "signals-0-deadband": "0.2",
        "signals-0-on_delay_seconds": "0", "signals-0-enabled": "",
    }  # fmt: skip
    cell_form = {
        "line": cell.line_id, "tag": cell.tag, "name": cell.name, "equipment_type": cell.equipment_type,
        "signals-TOTAL_FORMS": "1", "signals-INITIAL_FORMS": "1", "signals-MIN_NUM_FORMS": "0",
        "signals-MAX_NUM_FORMS": "1000", **inline,
    }  # fmt: skip
    refused = {
        f"/admin/sentinel/signaldefinition/{vibration.pk}/change/": _signal_form(vibration, enabled=""),
        f"/admin/sentinel/signaldefinition/{vibration.pk}/delete/": {"post": "yes"},
        "/admin/sentinel/connector/add/": _connector_form(name="rogue"),
        f"/admin/sentinel/connector/{connector.pk}/change/": _connector_form(),
        f"/admin/sentinel/connector/{connector.pk}/delete/": {"post": "yes"},
    }
    for url, data in refused.items():
        assert client.post(url, data).status_code == 403, url
    delete_all = {"action": "delete_selected", "_selected_action": [connector.pk], "post": "yes"}
    client.post("/admin/sentinel/connector/", delete_all)
    assert client.post(f"/admin/sentinel/cell/{cell.pk}/change/", cell_form).status_code == 403

    vibration.refresh_from_db()
    assert (vibration.alert, vibration.enabled, vibration.display_name) == (4.5, True, "vibration mm s")
    connector.refresh_from_db()
    assert connector.endpoint == "mqtt://broker.plant:1883"
    assert list(Connector.objects.values_list("name", flat=True)) == ["line-1"]
    assert ConnectorTag.objects.filter(connector=connector).count() == 1
    assert not AuditRecord.objects.filter(action__startswith="connector.").exists()
    assert not AuditRecord.objects.filter(action="signal.thresholds_change").exists()
    # Reading stays allowed: the lists open, without a save button or an add link.
    for url in ("/admin/sentinel/connector/", f"/admin/sentinel/connector/{connector.pk}/change/",
                "/admin/sentinel/signaldefinition/", f"/admin/sentinel/signaldefinition/{vibration.pk}/change/"):  # fmt: skip
        page = client.get(url)
        assert page.status_code == 200, url
        assert 'name="_save"' not in page.content.decode(), url


def test_an_admin_group_member_still_changes_them(client, make_user, vibration, connector):
    client.force_login(_staff_with_model_permissions(make_user, "ada", ADMIN))
    response = client.post(f"/admin/sentinel/signaldefinition/{vibration.pk}/change/", _signal_form(vibration))
    assert response.status_code == 302
    response = client.post(f"/admin/sentinel/connector/{connector.pk}/change/", _connector_form())
    assert response.status_code == 302, response.content.decode()[:2000]
    vibration.refresh_from_db()
    connector.refresh_from_db()
    assert (vibration.alert, connector.endpoint) == (6.0, "mqtt://evil.example:1883")


def _cell_form(cell, **overrides) -> dict:
    data = {
        "line": cell.line_id, "tag": cell.tag, "name": cell.name, "equipment_type": cell.equipment_type,
        "signals-TOTAL_FORMS": "0", "signals-INITIAL_FORMS": "0", "signals-MIN_NUM_FORMS": "0",
        "signals-MAX_NUM_FORMS": "1000",
    }  # fmt: skip
    return {**data, **overrides}


def _line_form(cell, **cell_fields) -> dict:
    row = {"id": cell.pk, "line": cell.line_id, "tag": cell.tag, "name": cell.name, "equipment_type": "pump"}
    row.update(cell_fields)
    data = {
        "site": cell.line.site_id, "name": cell.line.name, "cells-TOTAL_FORMS": "1", "cells-INITIAL_FORMS": "1",
        "cells-MIN_NUM_FORMS": "0", "cells-MAX_NUM_FORMS": "1000",
    }  # fmt: skip
    return {**data, **{f"cells-0-{k}": v for k, v in row.items() if v is not None}}


@pytest.mark.parametrize("scope", [OPERATOR, APPROVER])
def test_staff_without_the_admin_scope_cannot_take_a_cell_off_its_alarms(client, make_user, vibration, scope):
    """A cell whose onboarding_complete is off is not evaluated: none of its signals raises an alarm."""
    cell = vibration.cell
    cell.onboarding_complete = True
    cell.save()
    client.force_login(_staff_with_model_permissions(make_user, "stan", scope))
    assert client.post(f"/admin/sentinel/cell/{cell.pk}/change/", _cell_form(cell)).status_code == 403
    client.post(f"/admin/sentinel/line/{cell.line_id}/change/", _line_form(cell, onboarding_complete=None))
    cell.refresh_from_db()
    assert cell.onboarding_complete and not AuditRecord.objects.filter(target_type="sentinel.cell").exists()


def test_an_admin_taking_a_cell_off_or_on_is_audited(client, vibration):
    from django.contrib.auth.models import User

    cell = vibration.cell
    cell.onboarding_complete = True
    cell.save()
    client.force_login(User.objects.create_superuser("root", "root@example.com", "pw"))
    assert client.post(f"/admin/sentinel/cell/{cell.pk}/change/", _cell_form(cell)).status_code == 302
    response = client.post(f"/admin/sentinel/line/{cell.line_id}/change/", _line_form(cell, onboarding_complete="on"))
    assert response.status_code == 302, response.content.decode()[:2000]
    records = AuditRecord.objects.filter(action="cell.change").order_by("pk")
    assert [(r.target_id, r.details, r.actor_label) for r in records] == [
        (str(cell.pk), {"onboarding_complete": False}, "root"),
        (str(cell.pk), {"onboarding_complete": True, "equipment_type": "pump"}, "root"),
    ]
