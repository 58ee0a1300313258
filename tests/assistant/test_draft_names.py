"""Draft names are slugs: a skill's name is a path segment (PUT /sessions/{id}/skills/{name}) and is
listed in every session, so "../../x" or markup is refused — at the API (422 naming `name`), by the
authoring capability, and by the validator for drafts made any other way (a session turn, a service)."""

import pytest

from assistant.conf import get_config
from assistant.models import Draft, Operation
from assistant.models.drafts import DRAFT_NAME_MAX_LENGTH
from assistant.services.drafts import draft_create, draft_update, draft_validate
from assistant.validators import DRAFT_NAME_RULE, validate_spec
from core.capabilities import CapabilityContext, dispatch
from core.errors import InvalidInput

from .factories import PROMPT_SPEC, SKILL_SPEC, make_tested_draft

pytestmark = pytest.mark.django_db
API = "/api/v1/assistant"
HOSTILE = ["../../x", "<img src=x onerror=alert(1)>", "a/b", "..", " pump", "pump checks", "x" * 101, "-x"]
WORKFLOW_SPEC = {"description": "d", "steps": [{"capability": "assistant.create_draft", "inputs": {}}]}
MCP_SPEC = {"transport": "http", "url": "http://127.0.0.1:9/mcp"}
SPECS = {"skill": SKILL_SPEC, "prompt": PROMPT_SPEC, "workflow": WORKFLOW_SPEC, "mcp_server": MCP_SPEC}


def post(client, url, data=None):
    return client.post(url, data or {}, content_type="application/json")


@pytest.mark.parametrize("name", HOSTILE)
@pytest.mark.parametrize("kind", ["skill", "prompt", "workflow", "mcp_server", "tool"])
def test_the_api_refuses_a_hostile_name_naming_the_field(client, operator, kind, name):
    client.force_login(operator)
    response = post(client, f"{API}/drafts", {"type": kind, "name": name, "spec": SPECS.get(kind, {})})
    assert response.status_code == 422
    assert response.json()["field"] == "name"
    assert not Draft.objects.exists()


def test_an_edit_cannot_rename_a_draft_to_a_hostile_name(client, operator):
    client.force_login(operator)
    did = post(client, f"{API}/drafts", {"type": "skill", "name": "pump-checks", "spec": SKILL_SPEC}).json()["id"]
    for name in ("../../x", "<b>x</b>"):
        response = client.patch(f"{API}/drafts/{did}", {"name": name}, content_type="application/json")
        assert response.status_code == 422 and response.json()["field"] == "name"
    assert Draft.objects.get(pk=did).name == "pump-checks"


@pytest.mark.parametrize("kind", sorted(SPECS))
def test_the_validator_fails_a_hostile_name_made_outside_the_api(operator, kind):
    """A session turn or a service creates drafts without the API schema: validation (which publishing
    needs) fails with an error naming `name`; the same spec under a slug validates."""
    hostile = draft_create(owner=operator, type=kind, name="<img src=x onerror=alert(1)>", spec=SPECS[kind])
    hostile = draft_validate(draft=hostile, actor=operator)
    assert hostile.status == "validation_failed"
    assert DRAFT_NAME_RULE in hostile.validation_report["errors"]
    assert DRAFT_NAME_RULE.startswith("name ")
    good = draft_validate(
        draft=draft_create(owner=operator, type=kind, name="Pump_check-2", spec=SPECS[kind]), actor=operator
    )
    assert DRAFT_NAME_RULE not in good.validation_report["errors"]


def test_a_path_like_skill_name_cannot_validate_and_ordinary_names_still_do(operator):
    draft = draft_create(owner=operator, type="skill", name="../../x", spec=SKILL_SPEC)
    assert draft_validate(draft=draft, actor=operator).status == "validation_failed"
    config = get_config()
    for name in ("seal_check", "pump-checks", "PumpCheck", "s"):
        assert validate_spec("skill", name, SKILL_SPEC, config)["ok"], name
    assert validate_spec("skill", "  ", SKILL_SPEC, config)["errors"] == ["name is required."]


def test_the_authoring_capability_refuses_a_hostile_name(operator):
    result = dispatch(
        "assistant.create_draft",
        {"type": "skill", "name": "../../x", "spec": SKILL_SPEC},
        ctx=CapabilityContext(user=operator),
    )
    assert result.is_error and "name" in result.message
    assert not Draft.objects.exists()


def test_tool_names_keep_their_own_rule(operator):
    assert make_tested_draft(operator).status == "tested"  # "double": snake_case still passes


# --- one length limit, never a silent cut ------------------------------------------------------


def test_a_workbench_plan_with_a_name_over_the_limit_is_refused_naming_slots_name(client, operator):
    """The workbench planned a 120-character name, showed it in the preview, and execution stored
    its first 100 characters: the author got another name than they typed. Now the plan is a 422."""
    client.force_login(operator)
    long_name = "pump_" + "x" * 115
    response = post(client, f"{API}/plans", {"intent": "create_skill", "slots": {"name": long_name}, "text": "t"})
    assert response.status_code == 422, response.content
    body = response.json()
    assert body["field"] == "slots.name"
    assert body["detail"] == "slots.name: a draft's name has at most 100 characters (120 given)."
    assert not Operation.objects.exists() and not Draft.objects.exists()
    # a name from the words of the text (no slots.name) names the text
    words = "Create a skill " + "y" * 101
    response = post(client, f"{API}/plans", {"intent": "create_skill", "slots": {}, "text": words})
    assert (response.status_code, response.json()["field"]) == (422, "text")
    # exactly at the limit it plans and executes with the very name typed
    exact = "p" * DRAFT_NAME_MAX_LENGTH
    plan = post(client, f"{API}/plans", {"intent": "create_skill", "slots": {"name": exact}, "text": "t"}).json()
    done = post(client, f"{API}/plans/execute", {"plan_id": plan["id"], "confirm": True}).json()
    assert Draft.objects.get(pk=done["result"]["draft_id"]).name == exact


def test_an_operation_planned_with_a_long_name_fails_at_execution_instead_of_cutting_it(client, operator):
    operation = Operation.objects.create(
        owner=operator,
        intent="create_skill",
        slots={"name": "q" * 150},
        preview={**_skill_preview(), "name": "q" * 150},
    )
    client.force_login(operator)
    done = post(client, f"{API}/plans/execute", {"plan_id": operation.pk, "confirm": True}).json()
    assert done["status"] == "failed" and "at most 100 characters (150 given)" in done["error"]
    assert not Draft.objects.exists()


def _skill_preview() -> dict:
    return {"type": "skill", "name": "s", "spec": SKILL_SPEC}


def test_the_services_refuse_a_long_name_rather_than_cut_it(operator):
    with pytest.raises(InvalidInput) as created:
        draft_create(owner=operator, type="skill", name="n" * 101, spec=SKILL_SPEC)
    assert created.value.field == "name" and "at most 100 characters (101 given)" in created.value.message
    assert not Draft.objects.exists()
    draft = draft_create(owner=operator, type="skill", name="  kept  ", spec=SKILL_SPEC)
    with pytest.raises(InvalidInput) as renamed:
        draft_update(draft=draft, actor=operator, name="m" * 101)
    assert renamed.value.field == "name"
    draft.refresh_from_db()
    assert (draft.name, draft.version) == ("kept", 1)


def test_the_limit_is_the_columns(client, operator):
    assert Draft._meta.get_field("name").max_length == DRAFT_NAME_MAX_LENGTH == 100
    client.force_login(operator)
    response = post(client, f"{API}/drafts", {"type": "skill", "name": "z" * 101, "spec": SKILL_SPEC})
    assert (response.status_code, response.json()["field"]) == (422, "name")
