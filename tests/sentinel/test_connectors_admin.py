"""The connectors admin: a connector and its tag mapping are created through the form (audited),
credentials are environment-variable names whose values never reach the page, and bad settings
are refused field by field."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from core.models import AuditRecord
from sentinel.connectors.feed import Feed
from sentinel.connectors.opcua import OpcUaSession
from sentinel.models import Connector, ConnectorTag

pytestmark = pytest.mark.django_db
ADD = "/admin/sentinel/connector/add/"


@pytest.fixture
def staff(client):
    client.force_login(User.objects.create_superuser("root", "root@example.com", "pw"))
    return client


def _form(**overrides) -> dict:
    data = {
        "name": "line-1",
        "kind": "mqtt_json",
        "endpoint": "mqtt://broker.plant:1883",
        "topic_filter": "plant/#",
        "username_env": "ARIA_CONNECTOR_PLANT_MQTT_USER",
        "password_env": "ARIA_CONNECTOR_PLANT_MQTT_PASSWORD",
        "security_mode": "None",
        "security_policy": "",
        "certificate_path": "",
        "private_key_path": "",
        "enabled": "on",
        "tags-TOTAL_FORMS": "0",
        "tags-INITIAL_FORMS": "0",
        "tags-MIN_NUM_FORMS": "0",
        "tags-MAX_NUM_FORMS": "1000",
    }
    data.update(overrides)
    return data


def test_a_connector_with_its_tags_is_created_and_audited(staff, vibration):
    data = _form(
        **{"tags-TOTAL_FORMS": "1", "tags-0-source": " plant/p02/vib ", "tags-0-signal": str(vibration.pk)},
        **{"tags-0-scale": "0.1", "tags-0-offset": "0"},
    )
    response = staff.post(ADD, data)
    assert response.status_code == 302, response.content.decode()[:2000]
    connector = Connector.objects.get(name="line-1")
    tag = ConnectorTag.objects.get(connector=connector)
    assert (tag.source, tag.signal_id, tag.scale) == ("plant/p02/vib", vibration.pk, 0.1)
    actions = set(AuditRecord.objects.filter(target_id=str(connector.pk)).values_list("action", flat=True))
    assert actions == {"connector.create", "connector.tags_change"}


def test_the_pages_show_variable_names_never_their_values(staff, monkeypatch):
    monkeypatch.setenv("ARIA_CONNECTOR_PLANT_MQTT_PASSWORD", "s3cret-broker-pass")
    staff.post(ADD, _form())
    connector = Connector.objects.get(name="line-1")
    Connector.objects.filter(pk=connector.pk).update(status="error", last_error="cannot reach the broker")
    for url in ("/admin/sentinel/connector/", f"/admin/sentinel/connector/{connector.pk}/change/"):
        page = staff.get(url).content.decode()
        assert "s3cret-broker-pass" not in page
    page = staff.get(f"/admin/sentinel/connector/{connector.pk}/change/").content.decode()
    assert "ARIA_CONNECTOR_PLANT_MQTT_PASSWORD" in page
    assert "cannot reach the broker" in staff.get("/admin/sentinel/connector/").content.decode()


@pytest.mark.parametrize(
    ("overrides", "field", "message"),
    [
        ({"endpoint": "http://broker:1883"}, "endpoint", "must start with mqtt:// or mqtts://"),
        ({"kind": "opcua", "endpoint": "mqtt://broker:1883"}, "endpoint", "must start with opc.tcp://"),
        ({"password_env": "hunter2!"}, "password_env", "environment variable name"),
        ({"kind": "opcua", "endpoint": "opc.tcp://h:4840/", "security_mode": "Sign"}, "certificate_path", "required"),
        ({"kind": "opcua", "endpoint": "opc.tcp://plant:Pw0rd@h:4840/"}, "endpoint", "must not carry a user name"),
        ({"endpoint": "mqtt://edge:Pw0rd@broker:1883"}, "endpoint", "username_env / password_env"),
        ({"endpoint": "mqtts://edge@broker:8883"}, "endpoint", "must not carry a user name"),
        ({"topic_filter": "a/#/b"}, "topic_filter", "'#' must be alone in the last level"),
        ({"topic_filter": "plant/#x"}, "topic_filter", "'#' must be alone in the last level"),
        ({"topic_filter": "plant/p+/vib"}, "topic_filter", "'+' must be alone in its level"),
        ({"kind": "mqtt_sparkplug_b", "topic_filter": "spBv1.0/#/NDATA"}, "topic_filter", "'#' must be alone"),
        ({"endpoint": "mqtt://127.0.0.1:99999"}, "endpoint", "port must be a number from 1 to 65535"),
        ({"endpoint": "mqtt://127.0.0.1:0"}, "endpoint", "port must be a number from 1 to 65535"),
        ({"endpoint": "mqtts://broker:88x3"}, "endpoint", "port must be a number from 1 to 65535"),
        ({"kind": "opcua", "endpoint": "opc.tcp://h:65536/aria"}, "endpoint", "port must be a number from 1 to 65535"),
        ({"endpoint": "mqtt://"}, "endpoint", "must name a host"),
        ({"endpoint": "mqtts://:8883"}, "endpoint", "must name a host"),
        ({"kind": "mqtt_sparkplug_b", "endpoint": "mqtt:// "}, "endpoint", "must name a host"),
        ({"kind": "opcua", "endpoint": "opc.tcp://"}, "endpoint", "must name a host"),
        ({"kind": "opcua", "endpoint": "opc.tcp:///aria"}, "endpoint", "must name a host"),
        ({"username_env": "SECRET_KEY"}, "username_env", "must start with ARIA_CONNECTOR_"),
        ({"password_env": "DATABASE_URL"}, "password_env", "must start with ARIA_CONNECTOR_"),
        ({"password_env": "PLANT_MQTT_PASSWORD"}, "password_env", "must start with ARIA_CONNECTOR_"),
        ({"username_env": "ARIA_CONNECTOR_BACKLOG"}, "username_env", "is an ARIA setting, not a credential"),
    ],
)
def test_bad_settings_are_refused_naming_the_field(staff, overrides, field, message):
    response = staff.post(ADD, _form(**overrides))
    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert field in errors and message in " ".join(errors[field])
    assert not Connector.objects.exists()


@pytest.mark.parametrize(
    ("kind", "endpoint", "topic_filter"),
    [
        ("mqtt_json", "mqtt://127.0.0.1:1883", "plant/+/vibration"),
        ("mqtt_json", "mqtts://broker:65535", "#"),
        ("mqtt_sparkplug_b", "mqtt://broker", "spBv1.0/plant/+/edge-1/#"),
        ("opcua", "opc.tcp://h:1/aria", ""),
    ],
)
def test_good_filters_and_ports_are_accepted(staff, kind, endpoint, topic_filter):
    response = staff.post(ADD, _form(kind=kind, endpoint=endpoint, topic_filter=topic_filter))
    assert response.status_code == 302, response.context["adminform"].form.errors
    assert Connector.objects.get(name="line-1").topic_filter == topic_filter


def test_status_fields_cannot_be_typed_in(staff):
    staff.post(ADD, _form(status="connected", messages_total="999", last_error="forged"))
    connector = Connector.objects.get(name="line-1")
    assert (connector.status, connector.messages_total, connector.last_error) == ("stopped", 0, "")


def test_an_operator_cannot_open_the_connectors_admin(client, operator):
    client.force_login(operator)
    response = client.get("/admin/sentinel/connector/")
    assert response.status_code in (302, 403)


def test_an_endpoint_saved_with_credentials_is_listed_and_audited_without_them(staff):
    """A row written before the form refused user-info (or by a script) never shows the password:
    the list shows the endpoint without it, and an OPC UA session refuses to start on it."""
    connector = Connector.objects.create(name="legacy", kind="opcua", endpoint="opc.tcp://plant:Pw0rd@h:4840/aria")
    page = staff.get("/admin/sentinel/connector/").content.decode()
    assert "Pw0rd" not in page and "opc.tcp://***@h:4840/aria" in page

    with pytest.raises(ValueError) as refused:
        OpcUaSession(connector, Feed({}))
    assert "Pw0rd" not in str(refused.value) and "username_env" in str(refused.value)


def test_deleting_connectors_from_the_list_is_audited_for_each(staff):
    """The changelist's "Delete selected" skipped delete_model, so the connectors went with no record."""
    first, second = (Connector.objects.create(name=n, kind="mqtt_json", endpoint="mqtt://b:1883") for n in "ab")
    data = {"action": "delete_selected", "_selected_action": [first.pk, second.pk], "post": "yes"}
    response = staff.post("/admin/sentinel/connector/", data)
    assert response.status_code == 302
    assert not Connector.objects.exists()
    records = AuditRecord.objects.filter(action="connector.delete").order_by("pk")
    assert [(r.target_id, r.details, r.actor_label) for r in records] == [
        (str(first.pk), {"name": "a"}, "root"),
        (str(second.pk), {"name": "b"}, "root"),
    ]
