"""The seed's session-scoped routes (/sessions/{id}/drafts and the intent workbench under
/sessions/{id}/…): same services as the flat routes, owner-scoped, narrowed to the session."""

import pytest

from assistant.models import Draft, Operation
from assistant.services.drafts import draft_create
from assistant.services.sessions import session_create
from core.access import OPERATOR
from core.models import AuditRecord

from .factories import SKILL_SPEC

pytestmark = pytest.mark.django_db
API = "/api/v1/assistant"


def post(client, url, data):
    return client.post(url, data, content_type="application/json")


@pytest.fixture
def session(operator):
    return session_create(owner=operator, title="workbench")


def test_the_seed_walk_resolve_plan_latest_execute_operation(client, operator, session):
    client.force_login(operator)
    base = f"{API}/sessions/{session.pk}"
    # When the engineer types an intent in the session
    resolved = post(client, f"{base}/intent/resolve", {"text": "Create a skill called tidy_tools"})
    assert resolved.status_code == 200
    assert resolved.json() == {
        "intent": "create_skill",
        "confidence": 0.9,
        "slots": {"name": "tidy_tools"},
        "disabled": False,
    }
    body = resolved.json()
    planned = post(client, f"{base}/plans", {"intent": body["intent"], "slots": body["slots"], "text": "Be tidy."})
    assert planned.status_code == 201
    plan = planned.json()
    # Then the operation belongs to the session and nothing is written until it is confirmed
    assert plan["session_id"] == session.pk and plan["status"] == "planned" and Draft.objects.count() == 0
    assert client.get(f"{base}/plans/latest").json()["id"] == plan["id"]
    assert post(client, f"{base}/plans/execute", {"plan_id": plan["id"]}).json()["field"] == "confirm"
    done = post(client, f"{base}/plans/execute", {"plan_id": plan["id"], "confirm": True})
    assert done.status_code == 200 and done.json()["status"] == "executed"
    draft = Draft.objects.get(pk=done.json()["result"]["draft_id"])
    assert (draft.session_id, draft.owner, draft.status) == (session.pk, operator, "draft")
    assert client.get(f"{base}/operations/{plan['id']}").json()["result"] == {"draft_id": draft.pk}
    assert client.get(f"{base}/plans/latest").status_code == 404  # nothing left to confirm
    assert [d["id"] for d in client.get(f"{base}/drafts").json()] == [draft.pk]
    # And the flat routes see the same operation (one store, two paths)
    assert client.get(f"{API}/operations/{plan['id']}").json()["status"] == "executed"
    assert AuditRecord.objects.filter(action="assistant.operation_execute").count() == 1


def test_session_drafts_lists_only_that_sessions_drafts_with_a_status_filter(client, operator, session):
    other_session = session_create(owner=operator, title="other")
    mine = draft_create(owner=operator, type="skill", name="in_session", spec=SKILL_SPEC, session=session)
    draft_create(owner=operator, type="skill", name="elsewhere", spec=SKILL_SPEC, session=other_session)
    draft_create(owner=operator, type="skill", name="no_session", spec=SKILL_SPEC)
    client.force_login(operator)
    rows = client.get(f"{API}/sessions/{session.pk}/drafts").json()
    assert [(r["id"], r["name"]) for r in rows] == [(mine.pk, "in_session")]
    assert client.get(f"{API}/sessions/{session.pk}/drafts?status=draft").json()[0]["id"] == mine.pk
    assert client.get(f"{API}/sessions/{session.pk}/drafts?status=published").json() == []
    bad = client.get(f"{API}/sessions/{session.pk}/drafts?status=shipped")
    assert bad.status_code == 422 and bad.json()["field"] == "status"


def test_latest_and_operations_are_narrowed_to_the_session(client, operator, session):
    other_session = session_create(owner=operator, title="other")
    client.force_login(operator)
    in_other = post(client, f"{API}/sessions/{other_session.pk}/plans", {"intent": "create_skill"}).json()
    flat = post(client, f"{API}/plans", {"intent": "create_skill"}).json()  # no session
    base = f"{API}/sessions/{session.pk}"
    # The newest planned operation overall is not this session's: latest has none
    assert client.get(f"{API}/plans/latest").json()["id"] == flat["id"]
    assert client.get(f"{base}/plans/latest").status_code == 404
    for op in (in_other, flat):
        assert client.get(f"{base}/operations/{op['id']}").status_code == 404
        refused = post(client, f"{base}/plans/execute", {"plan_id": op["id"], "confirm": True})
        assert refused.status_code == 404
    assert Operation.objects.filter(status="planned").count() == 2 and Draft.objects.count() == 0


def test_another_users_session_is_a_404_on_every_route_and_writes_nothing(client, operator, session, make_user):
    client.force_login(operator)
    plan = post(client, f"{API}/sessions/{session.pk}/plans", {"intent": "create_skill"}).json()
    draft_create(owner=operator, type="skill", name="mine", spec=SKILL_SPEC, session=session)
    client.force_login(make_user("otto", OPERATOR))
    base = f"{API}/sessions/{session.pk}"
    responses = [
        client.get(f"{base}/drafts"),
        post(client, f"{base}/intent/resolve", {"text": "a skill"}),
        post(client, f"{base}/plans", {"intent": "create_skill"}),
        client.get(f"{base}/plans/latest"),
        post(client, f"{base}/plans/execute", {"plan_id": plan["id"], "confirm": True}),
        client.get(f"{base}/operations/{plan['id']}"),
    ]
    for response in responses:
        assert response.status_code == 404, response.content
        assert response.json()["detail"] == "Session not found."
    assert Operation.objects.count() == 1 and Operation.objects.get().status == "planned"
    assert Draft.objects.count() == 1


def test_the_users_own_session_cannot_reach_another_users_operation(client, operator, session, make_user):
    client.force_login(operator)
    plan = post(client, f"{API}/sessions/{session.pk}/plans", {"intent": "create_skill"}).json()
    otto = make_user("otto", OPERATOR)
    ottos = session_create(owner=otto, title="otto's")
    client.force_login(otto)
    assert client.get(f"{API}/sessions/{ottos.pk}/operations/{plan['id']}").status_code == 404
    assert (
        post(client, f"{API}/sessions/{ottos.pk}/plans/execute", {"plan_id": plan["id"], "confirm": True}).status_code
        == 404
    )
    assert Operation.objects.get().status == "planned"


def test_an_unknown_session_and_no_scope(client, operator, make_user):
    client.force_login(operator)
    assert client.get(f"{API}/sessions/999999/drafts").status_code == 404
    client.force_login(make_user("nobody"))
    assert client.get(f"{API}/sessions/999999/drafts").status_code == 403
    client.logout()
    assert post(client, f"{API}/sessions/1/intent/resolve", {"text": "x"}).status_code == 401


@pytest.mark.parametrize(
    ("route", "body", "field"),
    [
        ("intent/resolve", {}, "text"),
        ("intent/resolve", {"text": ""}, "text"),
        ("plans", {"intent": "approve_draft"}, "intent"),
        ("plans", {"intent": "create_skill", "slots": "name=x"}, "slots"),
        ("plans", {"intent": "create_skill", "text": "x" * 5001}, "text"),
        ("plans/execute", {"confirm": True}, "plan_id"),
        ("plans/execute", {"plan_id": "7", "confirm": True}, "plan_id"),
    ],
)
def test_bad_bodies_are_422_naming_the_field_and_write_nothing(client, operator, session, route, body, field):
    client.force_login(operator)
    response = post(client, f"{API}/sessions/{session.pk}/{route}", body)
    assert response.status_code == 422, response.content
    assert response.json()["field"] == field
    assert Operation.objects.count() == 0 and Draft.objects.count() == 0


def test_a_disabled_intent_is_refused_in_the_session_too(client, operator, session):
    from .factories import set_config

    set_config(disabled_intents=["create_skill"])
    client.force_login(operator)
    refused = post(client, f"{API}/sessions/{session.pk}/plans", {"intent": "create_skill"})
    assert refused.status_code == 422 and refused.json()["field"] == "intent"


def test_the_openapi_schema_lists_the_session_routes(client, operator):
    client.force_login(operator)
    paths = client.get("/api/v1/openapi.json").json()["paths"]
    base = "/api/v1/assistant/sessions/{session_id}"
    expected = {
        f"{base}/drafts": "get",
        f"{base}/intent/resolve": "post",
        f"{base}/plans": "post",
        f"{base}/plans/latest": "get",
        f"{base}/plans/execute": "post",
        f"{base}/operations/{{operation_id}}": "get",
    }
    for path, method in expected.items():
        assert method in paths[path], path
    assert "/api/v1/assistant/plans/execute" in paths  # the flat routes stay


def test_a_session_id_in_the_body_cannot_move_the_operation_to_another_users_session(
    client, operator, session, make_user
):
    ottos = session_create(owner=make_user("otto", OPERATOR), title="otto's")
    client.force_login(operator)
    # The path names the session; a body field naming another one is not read
    planned = post(client, f"{API}/sessions/{session.pk}/plans", {"intent": "create_skill", "session_id": ottos.pk})
    assert planned.status_code == 201 and planned.json()["session_id"] == session.pk
    assert not Operation.objects.filter(session=ottos).exists()


def test_hostile_an_admin_cannot_act_in_another_users_session(client, operator, admin_user, session):
    client.force_login(operator)
    base = f"{API}/sessions/{session.pk}"
    plan = post(client, f"{base}/plans", {"intent": "create_skill", "slots": {"name": "tidy"}, "text": "x"}).json()
    client.force_login(admin_user)
    operations = Operation.objects.count()
    refused = [
        post(client, f"{base}/intent/resolve", {"text": "Create a skill called sneaky"}),
        post(client, f"{base}/plans", {"intent": "create_skill", "slots": {"name": "sneaky"}, "text": "x"}),
        post(client, f"{base}/plans/execute", {"plan_id": plan["id"], "confirm": True}),
    ]
    assert [r.status_code for r in refused] == [404, 404, 404]
    assert Operation.objects.count() == operations and Draft.objects.count() == 0
    assert Operation.objects.get(pk=plan["id"]).status == "planned"


def test_planning_in_a_loop_keeps_only_the_newest_unexecuted_previews(client, operator, make_user, monkeypatch):
    from assistant.services import operations

    monkeypatch.setattr(operations, "PLANNED_KEPT", 3)
    client.force_login(operator)
    slots = {"name": "tidy"}
    executed = post(client, f"{API}/plans", {"intent": "create_skill", "slots": slots}).json()["id"]
    assert post(client, f"{API}/plans/execute", {"plan_id": executed, "confirm": True}).status_code == 200
    others = operations.operation_plan(owner=make_user("otto", OPERATOR), intent="create_skill", slots=slots)
    ids = [post(client, f"{API}/plans", {"intent": "create_skill", "slots": slots}).json()["id"] for _ in range(5)]

    planned = Operation.objects.filter(owner=operator, status="planned").values_list("id", flat=True)
    assert sorted(planned) == ids[-3:]  # the newest three
    assert Operation.objects.filter(pk=executed, status="executed").exists()  # the record of what ran stays
    assert Operation.objects.filter(pk=others.pk).exists()  # another owner's preview is theirs
    stale = post(client, f"{API}/plans/execute", {"plan_id": ids[0], "confirm": True})
    assert stale.status_code == 404 and Draft.objects.filter(owner=operator).count() == 1
