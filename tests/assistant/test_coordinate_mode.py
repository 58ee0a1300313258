"""Coordinator mode in an Ask ARIA session, over HTTP, against the real orchestrator coordinator."""

import pytest

pytest.importorskip("orchestrator.capabilities")

from assistant.models import Message, Run, Session
from assistant.services.sessions import session_create
from assistant.services.turns import session_turn
from core.errors import Forbidden
from orchestrator.models import CoordinatorTurn
from tests.workorders import factories as f

pytestmark = pytest.mark.django_db
API = "/api/v1/assistant"
QUESTION = "What is going on with P-02?"


@pytest.fixture
def api(client, operator):
    client.force_login(operator)
    return client


@pytest.fixture
def p02():
    cell = f.make_cell("P-02")
    f.ramp(f.make_signal(cell), peak=5.2)
    return f.make_work_order(cell, status="detected", priority="high", title="High vibration on P-02")


def post(client, url, data):
    return client.post(url, data, content_type="application/json")


def test_a_coordinator_turn_stores_both_messages_with_the_turn_details(api, operator, p02):
    sid = post(api, f"{API}/sessions", {"mode": "coordinate"}).json()["id"]

    response = post(api, f"{API}/sessions/{sid}/messages", {"content": QUESTION})

    assert response.status_code == 200, response.content
    body = response.json()
    turn = CoordinatorTurn.objects.get()
    assert (turn.user, turn.conversation, turn.message) == (operator, f"session-{sid}", QUESTION)
    details = body["coordinator"]
    assert details["turn_id"] == turn.pk and details["status"] == "ok" and body["reply"] == turn.answer
    assert details["tools"] and details["tool_calls"] == len(details["tools"])
    assert p02.pk in details["references"]["work_order_ids"]
    # both messages are in the session; reopening it gives the same details back
    user_msg, reply = client_messages(api, sid)
    assert (user_msg["role"], user_msg["content"], user_msg["metadata"]["mode"]) == ("user", QUESTION, "coordinate")
    assert reply["role"] == "assistant" and reply["content"] == turn.answer
    assert reply["metadata"]["coordinator"] == details and reply["metadata"]["run_id"] == body["run_id"]
    run = Run.objects.get(pk=body["run_id"])
    assert (run.mode, run.status, run.error) == ("coordinate", "completed", "")
    assert run.agent_run_id == turn.agent_run_id and run.agent_run.agent == "coordinator"
    assert Session.objects.get(pk=sid).title == QUESTION


def client_messages(client, sid):
    return client.get(f"{API}/sessions/{sid}/messages").json()


def test_follow_ups_in_a_session_share_the_coordinators_conversation(api, operator, p02):
    sid = post(api, f"{API}/sessions", {"mode": "chat"}).json()["id"]
    first = post(api, f"{API}/sessions/{sid}/messages", {"content": QUESTION, "mode": "coordinate"}).json()
    second = post(api, f"{API}/sessions/{sid}/messages", {"content": "And what should I do about it?"}).json()

    assert Session.objects.get(pk=sid).mode == "coordinate"  # the turn switched the session, the follow-up kept it
    earlier, later = CoordinatorTurn.objects.order_by("id")
    assert earlier.conversation == later.conversation == f"session-{sid}"
    packet = later.context_packet["conversation"]
    assert [(t["turn_id"], t["user"], t["answer"]) for t in packet] == [(earlier.pk, QUESTION, earlier.answer)]
    assert (first["coordinator"]["turn_id"], second["coordinator"]["turn_id"]) == (earlier.pk, later.pk)
    # another session is another conversation
    other = post(api, f"{API}/sessions", {"mode": "coordinate"}).json()["id"]
    post(api, f"{API}/sessions/{other}/messages", {"content": "Anything else?"})
    assert CoordinatorTurn.objects.latest("id").context_packet["conversation"] == []
    assert Message.objects.filter(session_id=sid).count() == 4


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"content": "x" * 4001}, "content"),  # the coordinator takes at most 4000 characters
        ({"content": "   "}, "content"),
        ({"content": ""}, "content"),
        ({"content": QUESTION, "mode": "coordinator"}, "mode"),
    ],
)
def test_bad_input_is_a_422_naming_the_field_and_writes_nothing(api, payload, field):
    sid = post(api, f"{API}/sessions", {"mode": "chat"}).json()["id"]
    response = post(api, f"{API}/sessions/{sid}/messages", {"mode": "coordinate", **payload})
    assert response.status_code == 422, response.content
    assert response.json()["field"] == field and response.json()["detail"]
    assert not Message.objects.exists() and not Run.objects.exists() and not CoordinatorTurn.objects.exists()
    assert Session.objects.get(pk=sid).mode == "chat"


def test_a_user_the_coordinator_refuses_gets_a_403_and_nothing_is_written(approver):
    session = session_create(owner=approver, mode="coordinate")
    with pytest.raises(Forbidden, match="requires scope operator") as refused:
        session_turn(session=session, user=approver, content=QUESTION)
    assert refused.value.status_code == 403 and refused.value.code == "missing_scope"
    assert not Message.objects.exists() and not Run.objects.exists() and not CoordinatorTurn.objects.exists()


def test_the_route_still_requires_the_operator_scope(client, approver):
    client.force_login(approver)
    response = post(client, f"{API}/sessions", {"mode": "coordinate"})
    assert response.status_code == 403 and response.json()["code"] == "missing_scope"
