"""The demo can show a shift handover through: seed_demo creates a second operator (the incoming
shift) beside `operator`, lists both in the credentials file, and the second acknowledges over the
API a handover the first signed (the author still may not acknowledge their own)."""

import io
import json

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command

from core.access import OPERATOR, has_scopes
from core.management.commands.seed_demo import _read_credentials
from core.models import AuditRecord
from workorders.models import ShiftHandover

pytestmark = pytest.mark.django_db
BASE = "/api/v1/workorders/shift/handovers"


def sign_in(client, username, password):
    """Through the login form, with the password the credentials file gives."""
    client.logout()
    response = client.post("/login/", {"username": username, "password": password})
    assert response.status_code == 302, response.content


def post(client, url, body=None):
    return client.post(url, json.dumps(body if body is not None else {}), content_type="application/json")


@pytest.fixture
def credentials(tmp_path, settings):
    settings.VAR_DIR = tmp_path
    path = tmp_path / "demo_credentials.txt"
    call_command("seed_demo", "--users-only", credentials_file=path, stdout=io.StringIO())
    return path


def test_seed_writes_both_operators_to_the_credentials_file(credentials):
    written = _read_credentials(credentials)
    assert {"operator", "operator2", "approver", "admin"} <= set(written)
    assert written["operator"] != written["operator2"]
    for name in ("operator", "operator2"):
        user = User.objects.get(username=name)
        assert has_scopes(user, (OPERATOR,)) and not user.is_staff
        assert user.check_password(written[name])


def test_a_demo_seeded_before_gets_the_second_operator_and_keeps_the_first_password(credentials):
    before = _read_credentials(credentials)
    User.objects.filter(username="operator2").delete()  # as a demo seeded with one operator
    credentials.write_text("".join(f"{k}: {v}\n" for k, v in before.items() if k != "operator2"))

    call_command("seed_demo", "--users-only", credentials_file=credentials, stdout=io.StringIO())
    after = _read_credentials(credentials)
    assert after["operator"] == before["operator"]
    assert User.objects.get(username="operator2").check_password(after["operator2"])
    assert oct(credentials.stat().st_mode & 0o777) == "0o600"


def test_the_second_operator_acknowledges_what_the_first_signed(client, credentials):
    written = _read_credentials(credentials)
    sign_in(client, "operator", written["operator"])
    created = post(client, BASE)
    assert created.status_code == 201, created.content
    url = f"{BASE}/{created.json()['id']}"
    assert post(client, f"{url}/sign").status_code == 200
    own = post(client, f"{url}/acknowledge", {"comment": "my own"})
    assert own.status_code == 403 and own.json()["code"] == "separation_of_duties"  # the rule stays

    sign_in(client, "operator2", written["operator2"])
    assert client.get(url).json()["can_acknowledge"]
    ack = post(client, f"{url}/acknowledge", {"comment": "Taken over."})
    assert ack.status_code == 200, ack.content
    body = ack.json()
    assert (body["status"], body["outgoing"], body["incoming"]) == ("acknowledged", "operator", "operator2")

    handover = ShiftHandover.objects.get(pk=body["id"])
    assert handover.incoming.username == "operator2" and handover.acknowledge_comment == "Taken over."
    assert AuditRecord.objects.filter(
        action="handover.acknowledge", actor__username="operator2", target_id=str(handover.pk)
    ).exists()
