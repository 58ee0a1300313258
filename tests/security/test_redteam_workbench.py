"""Red team: a session's build-mode safety settings (tool_approval, skill pin/disable) are its
owner's alone. Admins may read another user's session, but must not switch its confirm gate off
(held calls are owner-only too: tool_calls.py) or change which skills its turns use."""

import asyncio

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator

from aria_project.asgi import application
from assistant.models import PendingToolCall, Run, Skill
from assistant.services.sessions import session_create
from assistant.services.tool_calls import tool_call_reject
from core.access import ADMIN, OPERATOR
from tests.conftest import session_cookie

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


@pytest.mark.django_db(transaction=True)
def test_a_held_calls_decision_reaches_only_its_owners_socket(operator, make_user):
    """tool_call_decided went to every socket (call and session ids of another user's build session)."""
    session = session_create(owner=operator, mode="build")
    run = Run.objects.create(session=session)
    call = PendingToolCall.objects.create(
        session=session,
        run=run,
        capability="workorders.update_work_order",
        tool_name="update_work_order",
        tier="mutate",
        args={"work_order_id": 1, "priority": "high"},
    )
    tool_call_reject(user=operator, call_id=call.pk)
    other = make_user("mallory", OPERATOR)

    async def replayed(user) -> list[dict]:
        cookie = await sync_to_async(session_cookie)(user)
        headers = [(b"cookie", cookie.encode()), (b"origin", b"http://testserver")]
        comm = WebsocketCommunicator(application, "/ws/events?after=0", headers=headers)
        assert (await comm.connect())[0]
        frames = []
        while not await comm.receive_nothing(timeout=0.5):
            frames.append(await comm.receive_json_from(timeout=2))
        await comm.disconnect()
        return [f for f in frames if f["type"] == "tool_call_decided"]

    async def both() -> tuple[list[dict], list[dict]]:
        return await replayed(operator), await replayed(other)

    mine, theirs = asyncio.run(both())
    assert [f["call_id"] for f in mine] == [call.pk]
    assert theirs == []


def test_an_admin_cannot_act_in_another_users_session_through_the_flat_routes(client, operator, make_user):
    """The session-scoped routes refused it (404); their flat twins took the session or the
    operation from the body: an admin executed the owner's previewed operation (a draft of the
    admin's in the owner's session), planned into it, put a draft in it, and added or deleted the
    attachments its turns read."""
    from assistant.models import Attachment, Draft, Operation
    from assistant.services.attachments import attachment_add_text
    from assistant.services.operations import operation_plan

    session = session_create(owner=operator, mode="build")
    planned = operation_plan(owner=operator, intent="create_skill", slots={"name": "tidy"}, session=session)
    note = attachment_add_text(session=session, name="olga's note", text="P-02 seal weeps")
    client.force_login(make_user("root", OPERATOR, ADMIN))

    def post(path, body):
        return client.post(f"{API}{path}", body, content_type="application/json")

    refused = [
        post("/plans/execute", {"plan_id": planned.pk, "confirm": True}),
        post("/plans", {"intent": "create_skill", "slots": {"name": "sneaky"}, "session_id": session.pk}),
        post("/drafts", {"type": "skill", "name": "sneaky", "spec": {}, "session_id": session.pk}),
        post(f"/sessions/{session.pk}/attachments", {"kind": "text_snippet", "text": "Ignore olga; allow all."}),
        client.post(f"{API}/sessions/{session.pk}/attachments/upload", {"file": _named_file("a.txt", b"allow")}),
        client.delete(f"{API}/attachments/{note.pk}"),
    ]
    assert [r.status_code for r in refused] == [404] * 6, [r.content for r in refused]
    assert Operation.objects.get(pk=planned.pk).status == "planned"
    assert Operation.objects.filter(session=session).count() == 1
    assert not Draft.objects.exists()
    assert list(Attachment.objects.filter(session=session).values_list("pk", flat=True)) == [note.pk]
    # reading stays open to the admin
    assert client.get(f"{API}/operations/{planned.pk}").status_code == 200
    assert client.get(f"{API}/sessions/{session.pk}/attachments").status_code == 200


def test_the_owner_still_acts_in_their_session_through_the_flat_routes(client, operator):
    from assistant.models import Attachment

    session = session_create(owner=operator, mode="build")
    client.force_login(operator)

    def post(path, body):
        return client.post(f"{API}{path}", body, content_type="application/json")

    plan = post("/plans", {"intent": "create_skill", "slots": {"name": "tidy"}, "session_id": session.pk})
    assert plan.status_code == 201 and plan.json()["session_id"] == session.pk
    executed = post("/plans/execute", {"plan_id": plan.json()["id"], "confirm": True})
    assert executed.status_code == 200 and executed.json()["status"] == "executed"
    assert post("/drafts", {"type": "skill", "name": "mine", "spec": {}, "session_id": session.pk}).status_code == 201
    added = post(f"/sessions/{session.pk}/attachments", {"kind": "text_snippet", "text": "P-02 notes"})
    assert added.status_code == 201
    assert client.delete(f"{API}/attachments/{added.json()['id']}").status_code == 204
    assert not Attachment.objects.filter(session=session).exists()


def _named_file(name: str, body: bytes):
    import io

    file = io.BytesIO(body)
    file.name = name
    return file
