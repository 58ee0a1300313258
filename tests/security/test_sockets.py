"""Sockets follow the session (core.sockets, core.consumers.SessionBoundConsumer).

Issue 9: "A /ws/events socket keeps streaming after its user logs out; a chat frame arriving
right after a 4403 close crashes the consumer (`no attribute 'session_id'`)." Now logging out,
revoking the token a socket was opened with, or losing the scope closes the socket within a
second (4401 / 4403), a socket re-validates on every inbound frame, and frames after a refusal
are ignored. Each case runs over the real ASGI application (in-memory layer here, Redis in CI's
integration leg).
"""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import Group
from django.contrib.sessions.models import Session as SessionRow
from django.db import transaction
from django.test import Client

from aria_project.asgi import application
from assistant.models import Run
from core.events import publish
from core.tokens import api_token_create, api_token_revoke

pytestmark = pytest.mark.django_db(transaction=True)

ORIGIN = (b"origin", b"http://testserver")
CLOSE_WITHIN = 1.0  # seconds: the bound for a socket to follow its session


def _signed_in_client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _cookie(client: Client) -> tuple[bytes, bytes]:
    return (b"cookie", f"sessionid={client.cookies['sessionid'].value}".encode())


async def _open(path: str, *headers: tuple[bytes, bytes]) -> WebsocketCommunicator:
    comm = WebsocketCommunicator(application, path, headers=[ORIGIN, *headers])
    connected, _ = await comm.connect(timeout=5)
    assert connected
    return comm


async def _closed_with(comm: WebsocketCommunicator, code: int) -> None:
    """The socket closes with `code` within CLOSE_WITHIN (event frames it was still sent are skipped)."""
    while (message := await comm.receive_output(timeout=CLOSE_WITHIN))["type"] == "websocket.send":
        pass
    assert message == {"type": "websocket.close", "code": code}


def _publish_committed() -> int:
    with transaction.atomic():
        return publish("work_order_ready", {"work_order_id": 1}).pk


async def _still_streaming(comm: WebsocketCommunicator) -> None:
    """A newly committed event reaches the socket (after any it had not read yet)."""
    event_id = await sync_to_async(_publish_committed)()
    while (frame := await comm.receive_json_from(timeout=3))["id"] != event_id:
        assert frame["id"] < event_id


# --- logout ------------------------------------------------------------------------------------


async def test_events_socket_closes_when_its_session_logs_out(operator):
    browser = await sync_to_async(_signed_in_client)(operator)
    other_device = await sync_to_async(_signed_in_client)(operator)
    comm = await _open("/ws/events", _cookie(browser))
    other = await _open("/ws/events", _cookie(other_device))
    await _still_streaming(comm)
    await _still_streaming(other)

    response = await sync_to_async(browser.post)("/logout/")
    assert response.status_code == 302

    await _closed_with(comm, 4401)
    # The same user's socket on another signed-in session keeps its stream.
    await _still_streaming(other)
    await other.disconnect()


async def test_chat_socket_closes_on_logout(operator):
    browser = await sync_to_async(_signed_in_client)(operator)
    comm = await _open("/ws/agent/chat", _cookie(browser))
    await sync_to_async(browser.post)("/logout/")
    await _closed_with(comm, 4401)


# --- revoked tokens ----------------------------------------------------------------------------


async def test_a_socket_opened_with_a_token_closes_when_the_token_is_revoked(operator):
    token, raw = await sync_to_async(api_token_create)(user=operator, name="wallboard")
    comm = await _open("/ws/events", (b"authorization", f"Bearer {raw}".encode()))
    cookie_socket = await _open("/ws/events", _cookie(await sync_to_async(_signed_in_client)(operator)))
    await _still_streaming(comm)

    await sync_to_async(api_token_revoke)(token=token, actor=operator)

    await _closed_with(comm, 4401)
    await _still_streaming(cookie_socket)  # the user's browser session is not the token
    await cookie_socket.disconnect()


async def test_a_revoked_or_unknown_token_cannot_open_a_socket(operator):
    token, raw = await sync_to_async(api_token_create)(user=operator, name="old")
    await sync_to_async(api_token_revoke)(token=token, actor=operator)
    for credential in (raw, "aria_not-a-token"):
        comm = await _open("/ws/events", (b"authorization", f"Bearer {credential}".encode()))
        await _closed_with(comm, 4401)


# --- lost scope --------------------------------------------------------------------------------


async def test_chat_socket_closes_4403_when_the_user_leaves_the_operator_group(operator):
    comm = await _open("/ws/agent/chat", _cookie(await sync_to_async(_signed_in_client)(operator)))
    events = await _open("/ws/events", _cookie(await sync_to_async(_signed_in_client)(operator)))

    group = await sync_to_async(Group.objects.get)(name="operator")
    await sync_to_async(operator.groups.remove)(group)

    await _closed_with(comm, 4403)
    await _closed_with(events, 4403)  # no scope left at all: the plant's stream goes too


async def test_the_event_stream_needs_a_role_in_aria_not_only_a_sign_in(make_user):
    """A signed-in user with no scope gets 403 from the Control Room's reads: the same plant
    events (alarms, work orders, RCA renders) are not theirs over the socket either, nor by
    ?after= replay. One role is enough: an approver streams without the operator scope."""
    await sync_to_async(_publish_committed)()
    nobody = await sync_to_async(make_user)("nobody")
    for path in ("/ws/events", "/ws/events?after=0"):
        refused = await _open(path, _cookie(await sync_to_async(_signed_in_client)(nobody)))
        assert await refused.receive_output(timeout=2) == {"type": "websocket.close", "code": 4403}
    approver = await sync_to_async(make_user)("abby", "approver")
    events = await _open("/ws/events", _cookie(await sync_to_async(_signed_in_client)(approver)))
    await _still_streaming(events)
    await events.disconnect()


async def test_removing_members_from_the_group_side_closes_their_chat_sockets(operator):
    comm = await _open("/ws/agent/chat", _cookie(await sync_to_async(_signed_in_client)(operator)))
    group = await sync_to_async(Group.objects.get)(name="operator")
    await sync_to_async(group.user_set.clear)()
    await _closed_with(comm, 4403)


async def test_every_socket_closes_4401_when_the_user_is_deactivated(operator):
    chat = await _open("/ws/agent/chat", _cookie(await sync_to_async(_signed_in_client)(operator)))
    events = await _open("/ws/events", _cookie(await sync_to_async(_signed_in_client)(operator)))

    operator.is_active = False
    await sync_to_async(operator.save)()

    await _closed_with(chat, 4401)
    await _closed_with(events, 4401)


async def test_a_password_change_elsewhere_closes_the_old_sessions_sockets(operator):
    comm = await _open("/ws/events", _cookie(await sync_to_async(_signed_in_client)(operator)))
    operator.set_password("a-new-long-password")
    await sync_to_async(operator.save)()
    await _closed_with(comm, 4401)  # the session's auth hash no longer matches


async def test_a_login_elsewhere_does_not_close_open_sockets(operator):
    comm = await _open("/ws/events", _cookie(await sync_to_async(_signed_in_client)(operator)))
    await sync_to_async(_signed_in_client)(operator)  # stamps last_login only
    await _still_streaming(comm)
    await comm.disconnect()


# --- every inbound frame re-validates -----------------------------------------------------------


async def test_a_chat_frame_on_a_session_deleted_out_of_band_closes_and_runs_nothing(operator):
    """No signal fires when a session row is deleted (clearsessions, a cache eviction): the next
    frame notices, closes 4401 and starts no turn."""
    browser = await sync_to_async(_signed_in_client)(operator)
    comm = await _open("/ws/agent/chat", _cookie(browser))
    await sync_to_async(SessionRow.objects.filter(session_key=browser.cookies["sessionid"].value).delete)()

    await comm.send_json_to({"type": "user", "content": "why did P-02 trip?"})

    await _closed_with(comm, 4401)
    assert await sync_to_async(Run.objects.count)() == 0


async def test_an_inbound_frame_on_the_events_socket_re_validates_it(operator):
    browser = await sync_to_async(_signed_in_client)(operator)
    comm = await _open("/ws/events", _cookie(browser))
    await sync_to_async(SessionRow.objects.filter(session_key=browser.cookies["sessionid"].value).delete)()
    await comm.send_to(text_data="ping")
    await _closed_with(comm, 4401)


# --- frames after a refusal ----------------------------------------------------------------------


async def test_a_chat_frame_right_after_a_4403_close_is_ignored(make_user):
    visitor = await sync_to_async(make_user)("visitor")  # signed in, no operator scope
    comm = await _open("/ws/agent/chat", _cookie(await sync_to_async(_signed_in_client)(visitor)))
    await _closed_with(comm, 4403)

    await comm.send_json_to({"type": "user", "content": "hello", "session_id": 1})
    await comm.send_to(text_data="not json")

    assert await comm.receive_nothing(timeout=0.3)  # no frame back, and the consumer did not crash
    await comm.disconnect()  # re-raises any exception the consumer died of
    assert await sync_to_async(Run.objects.count)() == 0


async def test_frames_after_a_4401_close_are_ignored_on_both_sockets():
    for path in ("/ws/agent/chat", "/ws/events"):
        comm = await _open(path)
        await _closed_with(comm, 4401)
        await comm.send_json_to({"type": "user", "content": "hello"})
        assert await comm.receive_nothing(timeout=0.3)
        await comm.disconnect()


async def test_a_control_message_after_close_is_ignored(operator):
    """A logout that lands after the socket already closed for another reason changes nothing."""
    browser = await sync_to_async(_signed_in_client)(operator)
    comm = await _open("/ws/events", _cookie(browser))
    operator.is_active = False
    await sync_to_async(operator.save)()
    await _closed_with(comm, 4401)
    await sync_to_async(browser.post)("/logout/")
    assert await comm.receive_nothing(timeout=0.3)
    await comm.disconnect()
