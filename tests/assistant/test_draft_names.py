"""Draft names are slugs: a skill's name is a path segment (PUT /sessions/{id}/skills/{name}) and is
listed in every session, so "../../x" or markup is refused — at the API (422 naming `name`), by the
authoring capability, and by the validator for drafts made any other way (a session turn, a service)."""

import pytest

from assistant.conf import get_config
from assistant.models import Draft
from assistant.services.drafts import draft_create, draft_validate
from assistant.validators import DRAFT_NAME_RULE, validate_spec
from core.capabilities import CapabilityContext, dispatch

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
