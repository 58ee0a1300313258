"""Intent workbench: resolve → plans → plans/latest → plans/execute → operations/{id}."""

import pytest

from assistant.models import Draft
from core.access import OPERATOR
from core.models import AuditRecord

from .factories import set_config

pytestmark = pytest.mark.django_db
API = "/api/v1/assistant"


def post(client, url, data):
    return client.post(url, data, content_type="application/json")


def test_resolve_plan_confirm_execute(client, operator, make_user):
    client.force_login(operator)
    resolved = post(client, f"{API}/intent/resolve", {"text": "Create a skill called tidy_tools"}).json()
    assert resolved == {"intent": "create_skill", "confidence": 0.9, "slots": {"name": "tidy_tools"}, "disabled": False}
    planned = post(
        client, f"{API}/plans", {"intent": resolved["intent"], "slots": resolved["slots"], "text": "Be tidy."}
    )
    assert planned.status_code == 201
    plan = planned.json()
    assert plan["status"] == "planned" and plan["preview"]["name"] == "tidy_tools" and Draft.objects.count() == 0
    assert client.get(f"{API}/plans/latest").json()["id"] == plan["id"]

    assert post(client, f"{API}/plans/execute", {"plan_id": plan["id"]}).status_code == 422  # confirm first
    done = post(client, f"{API}/plans/execute", {"plan_id": plan["id"], "confirm": True}).json()
    assert done["status"] == "executed"
    draft = Draft.objects.get(pk=done["result"]["draft_id"])
    assert draft.status == "draft" and draft.owner == operator  # a draft, never approved or published
    assert post(client, f"{API}/plans/execute", {"plan_id": plan["id"], "confirm": True}).status_code == 409
    assert client.get(f"{API}/operations/{plan['id']}").json()["status"] == "executed"
    assert AuditRecord.objects.filter(action="assistant.operation_execute").count() == 1

    client.force_login(make_user("otto", OPERATOR))
    assert client.get(f"{API}/operations/{plan['id']}").status_code == 404
    assert post(client, f"{API}/plans/execute", {"plan_id": plan["id"], "confirm": True}).status_code == 404
    assert client.get(f"{API}/plans/latest").status_code == 404


def test_disabled_and_unknown_intents(client, operator):
    set_config(disabled_intents=["create_tool"])
    client.force_login(operator)
    assert post(client, f"{API}/intent/resolve", {"text": "a tool called x"}).json()["disabled"] is True
    assert post(client, f"{API}/plans", {"intent": "create_tool", "slots": {}}).status_code == 422
    assert post(client, f"{API}/plans", {"intent": "approve_draft", "slots": {}}).status_code == 422


def test_a_prompt_request_without_quotes_drafts_the_engineers_instruction():
    """'Draft a prompt for the investigator: <instruction>' keeps the instruction (the offline
    assistant drafted a canned 'Focus on {{focus}} first.' and dropped what was asked)."""
    from assistant.intents import draft_for, resolve_intent

    text = "Draft a prompt for the investigator: always check the lubrication log first for {{cell_tag}}."
    resolved = resolve_intent(text)
    draft = draft_for(resolved["intent"], resolved["slots"], text)
    assert draft["spec"]["agent"] == "investigator"
    assert "lways check the lubrication log first for {{cell_tag}}" in draft["spec"]["text"]
    assert draft["spec"]["variables"] == ["cell_tag"]


@pytest.mark.parametrize("flag", ["yes", "true", 1])
def test_execute_confirms_only_with_a_json_true(client, operator, flag):
    """{"confirm": "yes"} executed the operation (lax bool); now a 422 naming the field, nothing created."""
    client.force_login(operator)
    plan = post(client, f"{API}/plans", {"intent": "create_skill", "slots": {"name": "tidy"}, "text": "x"}).json()
    response = post(client, f"{API}/plans/execute", {"plan_id": plan["id"], "confirm": flag})
    assert response.status_code == 422
    assert response.json()["field"] == "confirm" and response.json()["detail"].startswith("confirm:")
    assert client.get(f"{API}/operations/{plan['id']}").json()["status"] == "planned"
    assert Draft.objects.count() == 0
    assert not AuditRecord.objects.filter(action="assistant.operation_execute").exists()
    # the session-scoped twin shares the schema
    sid = post(client, f"{API}/sessions", {"title": "s"}).json()["id"]
    twin = post(client, f"{API}/sessions/{sid}/plans/execute", {"plan_id": plan["id"], "confirm": flag})
    assert twin.status_code == 422 and twin.json()["field"] == "confirm" and Draft.objects.count() == 0
