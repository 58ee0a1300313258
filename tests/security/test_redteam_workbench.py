"""Red team: a session's build-mode safety settings (tool_approval, skill pin/disable) are its
owner's alone. Admins may read another user's session, but must not switch its confirm gate off
(held calls are owner-only too: tool_calls.py) or change which skills its turns use."""

import pytest

from assistant.models import PendingToolCall, Skill
from assistant.services.sessions import session_create
from core.access import ADMIN, OPERATOR

pytestmark = pytest.mark.django_db
API = "/api/v1/assistant"


def test_an_admin_cannot_switch_another_users_session_to_allow(client, operator, make_user):
    session = session_create(owner=operator, mode="build")
    client.force_login(make_user("root", OPERATOR, ADMIN))
    response = client.patch(f"{API}/sessions/{session.pk}", {"tool_approval": "allow"}, content_type="application/json")
    assert response.status_code == 404, response.content
    session.refresh_from_db()
    assert session.tool_approval == "ask"


def test_an_admin_cannot_pin_or_disable_skills_in_another_users_session(client, operator, make_user):
    Skill.objects.create(name="units", instructions="Always give SI units.", triggers=["units"])
    session = session_create(owner=operator, mode="build")
    client.force_login(make_user("root", OPERATOR, ADMIN))
    response = client.put(
        f"{API}/sessions/{session.pk}/skills/units", {"state": "disabled"}, content_type="application/json"
    )
    assert response.status_code == 404, response.content
    client.force_login(operator)
    states = {s["name"]: s["session_state"] for s in client.get(f"{API}/sessions/{session.pk}/skills").json()}
    assert states["units"] == "auto"


def test_the_owner_still_sets_both(client, operator):
    Skill.objects.create(name="units", instructions="Always give SI units.", triggers=["units"])
    session = session_create(owner=operator, mode="build")
    client.force_login(operator)
    url = f"{API}/sessions/{session.pk}"
    assert (
        client.patch(url, {"tool_approval": "allow"}, content_type="application/json").json()["tool_approval"]
        == "allow"
    )
    response = client.put(f"{url}/skills/units", {"state": "pinned"}, content_type="application/json")
    assert response.status_code == 200
    assert {s["name"]: s["session_state"] for s in response.json()}["units"] == "pinned"


def test_an_admin_cannot_speak_in_another_users_session(client, operator, make_user):
    session = session_create(owner=operator, mode="build")
    client.force_login(make_user("root", OPERATOR, ADMIN))
    response = client.post(
        f"{API}/sessions/{session.pk}/messages",
        {"content": "set the priority of work order 1 to high"},
        content_type="application/json",
    )
    assert response.status_code == 404, response.content
    assert not session.messages.exists()
    assert not PendingToolCall.objects.filter(session=session).exists()
