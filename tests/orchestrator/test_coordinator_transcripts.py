"""Coordinator turns as a user reaches them: live states on the bus while a turn runs, JSON export
with the hash chain (checked here with hashlib alone, as an auditor would offline), which engine
answered, `manage.py verify_transcripts`, and the read-only admin."""

import hashlib
import json

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.test.utils import CaptureQueriesContext

from core.access import ADMIN, APPROVER, OPERATOR
from core.agents.engines.fake import FakeEngine, FakeReply
from core.errors import InvalidInput
from core.events import publish
from core.models import Event
from orchestrator.coordinator.service import coordinator_turn
from orchestrator.models import CoordinatorTurn, Plan
from tests.orchestrator.conftest import build_plan, start

pytestmark = pytest.mark.django_db
TURNS = "/api/v1/aria/coordinator/turns"


def post_turn(client, message, **extra):
    response = client.post(TURNS, {"message": message, **extra}, content_type="application/json")
    assert response.status_code == 201, response.content
    return response.json()


def states(after=0):
    return [e.payload for e in Event.objects.filter(type="coordinator_turn_state", pk__gt=after).order_by("id")]


def job_plan(owner):
    return start(build_plan(owner, [{"capability": "otest.start_job", "inputs": {"ref": "job-1"}}]))


def test_a_real_turn_publishes_its_states_in_order(client, operator):
    plan = job_plan(operator)
    client.force_login(operator)
    turn = post_turn(client, "Stop it")
    assert Plan.objects.get(pk=plan.pk).status == "cancelled"
    published = states()
    assert [s["state"] for s in published] == ["inspecting", "validating", "executing", "answered"]
    assert {s["owner_id"] for s in published} == {operator.pk}
    assert {s["conversation"] for s in published} == {"default"}
    assert len({s["turn_id"] for s in published}) == 1 and published[0]["turn_id"]  # one running turn
    assert [s["coordinator_turn_id"] for s in published] == [None, None, None, turn["id"]]
    assert all(s["offline"] for s in published)  # the suite runs the offline demo engine
    # the payload carries no words of the user or the answer: those stay behind the owner's routes
    assert not any(key in s for s in published for key in ("message", "answer"))


def test_the_state_event_is_checked_at_publish(operator):
    good = {"owner_id": operator.pk, "turn_id": "t1", "conversation": "default", "state": "inspecting"}
    good |= {"coordinator_turn_id": None, "offline": True}
    publish("coordinator_turn_state", good)
    for field, value in (("state", "dancing"), ("owner_id", None), ("message", "leaked words")):
        with pytest.raises(InvalidInput) as refused:
            publish("coordinator_turn_state", {**good, field: value})
        assert refused.value.field == field
    with pytest.raises(InvalidInput) as refused:  # a private event names its owner
        publish("coordinator_turn_state", {k: v for k, v in good.items() if k != "owner_id"})
    assert refused.value.field == "owner_id"


def test_a_refused_action_ends_rejected_without_executing(operator, make_user):
    other = start(build_plan(make_user("rita", OPERATOR), [{"capability": "otest.start_job", "inputs": {"ref": "r"}}]))
    refused = {"type": "cancel_plan", "plan_id": other.pk, "user_request_quote": "Stop it"}
    engine = FakeEngine(
        script=[FakeReply(tool_calls=[("submit_action_plan", {"summary": "ok", "actions": [refused]})])]
    )
    turn = coordinator_turn(user=operator, message="Stop it", engine=engine)
    assert turn.status == "rejected" and Plan.objects.get(pk=other.pk).status == "running"
    assert [s["state"] for s in states()] == ["inspecting", "validating", "rejected"]


def test_a_turn_without_an_action_plan_ends_failed(operator):
    turn = coordinator_turn(user=operator, message="hello", engine=FakeEngine(script=[FakeReply(text="Not sure.")]))
    assert turn.status == "failed"
    assert [s["state"] for s in states()] == ["inspecting", "failed"]


def test_a_confirmed_proposal_is_validated_and_run_in_code(client, operator):
    job_plan(operator)
    client.force_login(operator)
    proposal = {"type": "create_plan", "goal": "something new"}  # nothing in "and then" asks for it
    engine = FakeEngine(
        script=[FakeReply(tool_calls=[("submit_action_plan", {"summary": "ok", "actions": [proposal]})])]
    )
    turn = coordinator_turn(user=operator, message="and then", engine=engine)
    assert turn.executed == []
    mark = Event.objects.order_by("-id").first().pk
    confirmed = post_turn(client, f"confirm proposal 0 of turn {turn.pk}")  # the confirm card's words
    seen = states(mark)
    assert [s["state"] for s in seen] == ["validating", "executing", "answered"]
    assert seen[-1]["coordinator_turn_id"] == confirmed["id"] and not any(s["offline"] for s in seen)


# --- export ----------------------------------------------------------------------------------------


def offline_check(export):
    """What an auditor runs on the file: every turn's hash from its previous_hash and body."""
    for turn in export["turns"]:
        text = json.dumps([turn["previous_hash"], turn["body"]], sort_keys=True, separators=(",", ":"))
        assert hashlib.sha256(text.encode()).hexdigest() == turn["hash"], turn["id"]


def test_export_carries_the_chain_and_verifies_offline(client, operator, make_user):
    client.force_login(operator)
    ids = [post_turn(client, m, conversation="line-2")["id"] for m in ("What happened?", "Anything waiting on me?")]
    post_turn(client, "Hello", conversation="other")
    response = client.get("/api/v1/aria/coordinator/conversations/line-2/export")
    assert response.status_code == 200 and "attachment" in response["Content-Disposition"]
    export = response.json()
    assert export["conversation"] == "line-2" and [t["id"] for t in export["turns"]] == ids
    assert export["turns"][1]["previous_hash"] == export["turns"][0]["hash"]
    assert export["turns"][1]["follows_previous_exported"] is True
    assert all(t["offline"] and t["engine"] == "fake" for t in export["turns"])
    assert export["turns"][0]["body"]["message"] == "What happened?"
    offline_check(export)
    # a change to the file is caught by the same offline check
    export["turns"][0]["body"]["answer"] = "I fixed everything."
    with pytest.raises(AssertionError):
        offline_check(export)
    one = client.get(f"{TURNS}/{ids[0]}/export").json()
    assert [t["id"] for t in one["turns"]] == [ids[0]]
    offline_check(one)


@pytest.mark.usefixtures("steady_registry")
def test_export_and_engine_lookup_queries_do_not_grow_with_the_turns(client, operator):
    client.force_login(operator)

    def queries(path):
        with CaptureQueriesContext(connection) as captured:
            assert client.get(path).status_code == 200
        return len(captured)

    ids = [post_turn(client, "What happened?", conversation="q")["id"]]
    one = queries("/api/v1/aria/coordinator/conversations/q/export")
    one_lookup = queries(f"/api/v1/aria/coordinator/turn-engines?ids={ids[0]}")
    ids += [post_turn(client, f"Hello {n}", conversation="q")["id"] for n in range(3)]
    assert queries("/api/v1/aria/coordinator/conversations/q/export") == one
    assert queries(f"/api/v1/aria/coordinator/turn-engines?ids={','.join(map(str, ids))}") == one_lookup


def test_export_is_owner_scoped(client, operator, make_user):
    client.force_login(operator)
    mine = post_turn(client, "What happened?", conversation="mine")
    client.force_login(make_user("mallory", OPERATOR))
    assert client.get("/api/v1/aria/coordinator/conversations/mine/export").status_code == 404
    assert client.get(f"{TURNS}/{mine['id']}/export").status_code == 404
    # the same conversation name of her own holds only her turns
    post_turn(client, "Hello", conversation="mine")
    export = client.get("/api/v1/aria/coordinator/conversations/mine/export").json()
    assert [t["body"]["message"] for t in export["turns"]] == ["Hello"]
    client.logout()
    assert client.get("/api/v1/aria/coordinator/conversations/mine/export").status_code == 401


def test_export_rejects_a_conversation_name_too_long(client, operator):
    client.force_login(operator)
    response = client.get(f"/api/v1/aria/coordinator/conversations/{'x' * 81}/export")
    assert response.status_code == 422


def test_turn_engines_marks_offline_turns_and_hides_other_users(client, operator, make_user):
    client.force_login(operator)
    mine = post_turn(client, "What happened?")["id"]
    client.force_login(make_user("mallory", OPERATOR))
    theirs = post_turn(client, "Hello")["id"]
    client.force_login(operator)
    body = client.get(f"/api/v1/aria/coordinator/turn-engines?ids={mine},{theirs}").json()
    assert body == {"turns": [{"id": mine, "engine": "fake", "offline": True}]}
    for bad in ("", "a,b", ",".join(["1"] * 101), "1.5"):
        response = client.get(f"/api/v1/aria/coordinator/turn-engines?ids={bad}")
        assert response.status_code == 422 and "ids" in response.content.decode(), bad


# --- verify_transcripts ----------------------------------------------------------------------------


def test_verify_transcripts_passes_then_names_each_broken_turn(client, operator, make_user, capsys):
    client.force_login(operator)
    turns = [post_turn(client, m, conversation="night")["id"] for m in ("What happened?", "Hello", "Status?")]
    client.force_login(make_user("rita", OPERATOR))
    post_turn(client, "Hello", conversation="day")
    call_command("verify_transcripts")
    assert "Transcripts OK (4 turns, 2 conversations)" in capsys.readouterr().out

    CoordinatorTurn.objects.filter(pk=turns[1]).update(answer="rewritten after the fact")
    with pytest.raises(CommandError) as refused:
        call_command("verify_transcripts")
    assert refused.value.returncode == 1 and "1 broken turn(s) in 1 conversation(s)" in str(refused.value)
    err = capsys.readouterr().err
    assert f"BROKEN conversation 'night' (user {operator.pk}): turn {turns[1]}: its recorded fields" in err
    assert err.count("BROKEN") == 1  # the turns after it still link to its stored hash

    CoordinatorTurn.objects.filter(pk=turns[2]).delete()  # a removed turn breaks the next one's link
    with pytest.raises(CommandError):
        call_command("verify_transcripts")
    err = capsys.readouterr().err
    assert err.count("BROKEN") == 2 and "previous_hash is not the hash of the turn before it" in err


# --- the read-only admin ---------------------------------------------------------------------------


def staff(user: User, superuser: bool = False) -> User:
    user.is_staff, user.is_superuser = True, superuser
    user.save()
    return User.objects.get(pk=user.pk)


def test_admin_lists_and_explains_turns_for_admins_only(client, operator, make_user):
    job_plan(operator)
    client.force_login(operator)
    turn = post_turn(client, "Stop it")
    assert client.get("/admin/orchestrator/coordinatorturn/").status_code == 302  # not staff: to the login
    # A turn is a person's conversation: staff without the admin scope (an approver too) get a 403.
    for name, scopes in (("auditor", ()), ("april2", (APPROVER,))):
        client.force_login(staff(make_user(name, *scopes)))
        assert client.get("/admin/orchestrator/coordinatorturn/").status_code == 403
        assert client.get(f"/admin/orchestrator/coordinatorturn/{turn['id']}/change/").status_code == 403
    client.force_login(staff(make_user("auditor_admin", ADMIN)))
    listing = client.get("/admin/orchestrator/coordinatorturn/?status__exact=ok")
    assert listing.status_code == 200 and b"Stop it" in listing.content
    page = client.get(f"/admin/orchestrator/coordinatorturn/{turn['id']}/change/")
    text = page.content.decode()
    assert page.status_code == 200 and "Explain: why did it do that" in text and "cancel_plan" in text
    assert "✓ backed_by_message" in text and "offline demo engine" in text
    assert "its fields match its hash" in text
    assert "Save" not in text and 'name="_save"' not in text


def test_admin_refuses_change_add_and_delete_even_to_a_superuser(client, operator, make_user):
    client.force_login(operator)
    turn = post_turn(client, "What happened?")
    client.force_login(staff(make_user("root"), superuser=True))
    url = f"/admin/orchestrator/coordinatorturn/{turn['id']}/"
    changed = client.post(f"{url}change/", {"message": "forged", "answer": "forged", "status": "ok"})
    assert changed.status_code == 403
    assert client.post(f"{url}delete/", {"post": "yes"}).status_code == 403
    assert client.get("/admin/orchestrator/coordinatorturn/add/").status_code == 403
    stored = CoordinatorTurn.objects.get(pk=turn["id"])
    assert stored.message == "What happened?" and stored.answer != "forged"
    listing = client.get("/admin/orchestrator/coordinatorturn/").content.decode()
    assert "delete_selected" not in listing
