"""Ids of another user's objects smuggled in a body or a query string, not the path.

tests/security/test_every_owned_route.py walks the ids in paths. Here the same objects (owned by
the operator, tests/security/owned_world.py) are named where a body or a filter takes an id — a
chat or draft's `session_id`, an operation's `plan_id`, a library attachment's draft ref, a confirm
command's turn id, a list's `session_id`/`conversation`/`ids` filter — by a peer operator (and an
approver where approvers read more). Each answer is exactly what an id naming nothing gets, and
nothing is written: no row of ARIA's tables (audit, events and agent runs included) changes. The
chat socket gets the same treatment for a `session_id` in its frame.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.test import Client

from aria_project.asgi import application
from assistant.models import Message, Run, Session
from assistant.services.drafts import draft_create
from core.access import APPROVER, OPERATOR
from tests.assistant.factories import TOOL_SPEC
from tests.conftest import session_cookie
from tests.security.owned_world import MISSING_INT, owned_world, snapshot

API = "/api/v1"


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _answer(response: Any) -> tuple[int, str, str, str]:
    data = response.json()
    if not isinstance(data, dict):
        return response.status_code, "", "", json.dumps(data)
    return (
        response.status_code,
        data.get("code", ""),
        data.get("field", ""),
        re.sub(r"\d+", "#", data.get("detail", "")),
    )


# (name, method, url, body): `{x}` is filled with the owner's object or an id naming nothing.
BODY_CASES = [
    ("chat in their session", "POST", "/agent/chat", {"messages": [{"role": "user", "content": "hi"}], "session_id": "{session_id}"}),
    ("plan in their session", "POST", "/assistant/plans", {"intent": "create_skill", "slots": {"name": "x"}, "session_id": "{session_id}"}),
    ("draft in their session", "POST", "/assistant/drafts", {"type": "skill", "name": "x", "spec": {}, "session_id": "{session_id}"}),
    ("execute their operation", "POST", "/assistant/plans/execute", {"plan_id": "{operation_id}", "confirm": True}),
    ("execute theirs in my session", "POST", "/assistant/sessions/{my_session}/plans/execute", {"plan_id": "{operation_id}", "confirm": True}),
    ("attach their draft tool", "POST", "/assistant/sessions/{my_session}/attachments", {"kind": "library_resource", "resource_type": "tool", "ref": "{tool_draft}"}),
    ("confirm their turn's proposal", "POST", "/aria/coordinator/turns", {"message": "confirm proposal 0 of turn {turn_id}"}),
]  # fmt: skip

QUERY_CASES = [
    ("drafts of their session", "/assistant/drafts?session_id={session_id}"),
    ("their turns by conversation", "/aria/coordinator/turns?conversation={conversation}"),
    ("engines of their turns", "/aria/coordinator/turn-engines?ids={turn_id}"),
    ("handovers by their words", "/workorders/shift/handovers?q={owner_name}"),
]


def _fill(value: Any, ids: dict[str, Any]) -> Any:
    """`"{x}"` alone becomes the id itself (an integer in JSON); inside text it is formatted in."""
    if isinstance(value, dict):
        return {k: _fill(v, ids) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, ids) for v in value]
    if isinstance(value, str) and (whole := re.fullmatch(r"{(\w+)}", value)):
        return ids[whole.group(1)]
    return value.format(**ids) if isinstance(value, str) else value


@pytest.fixture
def world(operator, make_user, settings, tmp_path) -> dict[str, Any]:
    settings.MEDIA_ROOT = str(tmp_path / "media")
    ids = owned_world(operator)
    ids["owner_name"] = operator.username
    ids["tool_draft"] = str(draft_create(owner=operator, type="tool", name="double", spec=TOOL_SPEC).pk)
    peer = make_user("bob", OPERATOR)
    ids["my_session"] = Session.objects.create(owner=peer, title="mine").pk
    ids["peer"], ids["approver"] = _client(peer), _client(make_user("abby", APPROVER, OPERATOR))
    return ids


def _missing(ids: dict[str, Any]) -> dict[str, Any]:
    mine = ("my_session", "peer", "approver")
    return {k: v if k in mine else (str(MISSING_INT) if isinstance(v, str) else MISSING_INT) for k, v in ids.items()}


@pytest.mark.django_db
@pytest.mark.parametrize(("name", "method", "url", "body"), BODY_CASES, ids=[c[0] for c in BODY_CASES])
def test_an_id_in_a_body_is_owner_scoped(world, name, method, url, body) -> None:
    before = snapshot()
    for who in ("peer", "approver"):
        client = world[who]
        answers = []
        for ids in (world, _missing(world)):
            data = json.dumps(_fill(body, ids))
            answers.append(
                _answer(client.generic(method, API + url.format(**ids), data, content_type="application/json"))
            )
        theirs, nothing = answers
        assert theirs == nothing, (who, theirs)
        assert theirs[:2] == (404, "not_found"), (who, theirs)
        assert snapshot() == before, who


@pytest.mark.django_db
@pytest.mark.parametrize(("name", "url"), QUERY_CASES, ids=[c[0] for c in QUERY_CASES])
def test_an_id_in_a_filter_finds_nothing_of_theirs(world, name, url) -> None:
    before = snapshot()
    for who in ("peer", "approver"):
        theirs = world[who].get(API + url.format(**world))
        nothing = world[who].get(API + url.format(**_missing(world)))
        assert theirs.status_code == 200, theirs.content
        assert _answer(theirs) == _answer(nothing), who
        assert snapshot() == before


async def _until_done(comm: WebsocketCommunicator) -> dict[str, Any]:
    while (frame := await comm.receive_json_from(timeout=10))["type"] != "done":
        pass
    return frame


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_the_chat_socket_does_not_speak_in_another_users_session(operator, make_user) -> None:
    """A frame naming the owner's session is the same error as one naming no session, writes
    nothing and runs no model; the socket's next turn opens the caller's own session."""
    ids = await sync_to_async(owned_world)(operator)
    peer = await sync_to_async(make_user)("bob", OPERATOR)
    cookie = await sync_to_async(session_cookie)(peer)
    headers = [(b"origin", b"http://testserver"), (b"host", b"testserver"), (b"cookie", cookie.encode())]
    comm = WebsocketCommunicator(application, "/ws/agent/chat", headers=headers)
    assert (await comm.connect())[0]
    before = await sync_to_async(snapshot)()

    await comm.send_json_to({"type": "user", "content": "what did you tell olga?", "session_id": ids["session_id"]})
    theirs = await _until_done(comm)
    await comm.send_json_to({"type": "user", "content": "what did you tell olga?", "session_id": MISSING_INT})
    nothing = await _until_done(comm)

    assert theirs == nothing == {"type": "done", "error": "Session not found."}
    assert await sync_to_async(snapshot)() == before
    await comm.send_json_to({"type": "user", "content": "hello"})
    await _until_done(comm)
    session = await sync_to_async(Session.objects.get)(messages__content="hello")
    assert session.owner_id == peer.pk and session.pk != ids["session_id"]
    theirs_now = await sync_to_async(Message.objects.filter(session_id=ids["session_id"]).count)()
    assert theirs_now == len(before["assistant.Message"])  # the owner's session got nothing
    assert await sync_to_async(Run.objects.filter(session=session).count)() == 1  # the own turn ran
    await comm.disconnect()
