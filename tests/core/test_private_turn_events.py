"""A user's own chat and coordinator turns are theirs on the bus: every event the turn's agents
publish carries owner_id (core.events.private_scope), so only that user's sockets get it; work
outside such a turn (an investigation, a sentinel alarm) stays public."""

import pytest
from asgiref.sync import async_to_sync
from channels.testing import WebsocketCommunicator

from aria_project.asgi import application
from assistant.services.sessions import session_create
from assistant.services.turns import session_turn
from core.events import private_scope, publish
from core.models import Event
from tests.conftest import session_cookie
from tests.workorders import factories as f

pytestmark = pytest.mark.django_db(transaction=True)
AGENT_EVENTS = {"agent_start", "agent_end", "tool_call_started", "tool_call_completed", "thinking_delta"}


def _events_after(first_id: int) -> list[Event]:
    return list(Event.objects.filter(id__gt=first_id, type__in=AGENT_EVENTS).order_by("id"))


def _last_id() -> int:
    return Event.objects.order_by("-id").values_list("id", flat=True).first() or 0


def test_a_chat_turns_agent_events_carry_its_owner(operator):
    f.make_kb(f.make_cell("P-02"))
    session = session_create(owner=operator, mode="chat", kind="qa")
    first = _last_id()
    session_turn(session=session, user=operator, content="What is P-02?")
    events = _events_after(first)
    assert events and {e.payload.get("owner_id") for e in events} == {operator.pk}


def test_a_coordinator_turns_agent_events_carry_its_owner(client, operator):
    f.make_cell("P-02")
    first = _last_id()
    client.force_login(operator)
    answer = client.post(
        "/api/v1/aria/coordinator/turns", {"message": "What is going on with P-02?"}, content_type="application/json"
    )
    assert answer.status_code == 201, answer.content
    events = _events_after(first)
    assert events and {e.payload.get("owner_id") for e in events} == {operator.pk}


def test_work_outside_a_turn_stays_public_and_the_scope_ends_with_the_turn(operator):
    with private_scope(operator.pk):
        inside = publish("agent_start", {"agent": "operator_qa", "turn_id": "t1"})
    outside = publish("agent_start", {"agent": "investigator", "turn_id": "t2"})
    assert inside.payload["owner_id"] == operator.pk
    assert "owner_id" not in outside.payload


def test_another_users_socket_never_sees_the_turns_events(operator, make_user):
    from core.access import OPERATOR

    other = make_user("otto", OPERATOR)
    with private_scope(operator.pk):
        mine = publish("agent_start", {"agent": "operator_qa", "turn_id": "private-turn"})
    public = publish("agent_start", {"agent": "investigator", "turn_id": "public-turn"})

    async def replayed_to(cookie: str) -> list[int]:
        socket = WebsocketCommunicator(
            application,
            f"/ws/events?after={mine.pk - 1}",
            headers=[(b"cookie", cookie.encode()), (b"origin", b"http://testserver")],
        )
        connected, _ = await socket.connect()
        assert connected
        ids = []
        while True:
            try:
                frame = await socket.receive_json_from(timeout=2)
            except Exception:
                break
            if "id" in frame:
                ids.append(frame["id"])
            if frame.get("id") == public.pk:
                break
        await socket.disconnect()
        return ids

    assert mine.pk in async_to_sync(replayed_to)(session_cookie(operator))
    seen_by_other = async_to_sync(replayed_to)(session_cookie(other))
    assert public.pk in seen_by_other and mine.pk not in seen_by_other
